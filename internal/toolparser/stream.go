package toolparser

import (
	"strings"
	"unicode/utf8"
)

// Stream parses one output as it is generated. Feed it the text deltas in
// order, then call Finish once. It holds back only what it cannot decide
// yet: a suffix that may begin a call, a call until it is complete, an
// incomplete UTF-8 sequence, and a run of separators that may turn out to
// stand between calls.
type Stream struct {
	p        *Parser
	buf      string // text not decided yet
	acc      strings.Builder
	owned    bool // buf is the tail of acc's string
	scan     scan // findEnd's progress over the open region
	inRegion bool
	atStart  bool // nothing of the output has been decided yet
	calls    int  // calls emitted
	// the content segment since the start or the last call:
	blank     bool   // so far only separators (held in pending)
	pending   string // those separators
	afterCall bool   // the segment follows a call
	finished  bool
	base      int // len(dst) when the running Feed or Finish began
}

// NewStream starts parsing one output.
func (p *Parser) NewStream() *Stream {
	return &Stream{p: p, atStart: true, blank: true}
}

// Feed appends the deltas that text decides to dst and returns it.
func (s *Stream) Feed(dst []Delta, text string) []Delta {
	if s.finished {
		panic("toolparser: Feed after Finish")
	}
	s.append(text)
	s.base = len(dst)
	return s.drain(dst, false)
}

// append adds text to the undecided text without copying what is held:
// the text itself when nothing is held, else acc grows (its earlier bytes,
// which deltas may point into, are never rewritten), and is started afresh
// with the held tail once most of it has been decided.
func (s *Stream) append(text string) {
	switch {
	case s.buf == "":
		s.buf, s.owned = text, false
		return
	case !s.owned || s.acc.Len() > 2*len(s.buf)+4096:
		held := s.buf
		s.acc = strings.Builder{}
		s.acc.Grow(len(held) + len(text))
		s.acc.WriteString(held)
		s.owned = true
	}
	s.acc.WriteString(text)
	all := s.acc.String()
	s.buf = all[len(all)-len(s.buf)-len(text):]
}

// Finish appends the deltas the end of the output decides: a call without
// its closing marker is parsed as it stands, held text is released.
func (s *Stream) Finish(dst []Delta) []Delta {
	if s.finished {
		return dst
	}
	s.base = len(dst)
	dst = s.drain(dst, true)
	if s.blank && !s.afterCall && s.pending != "" {
		dst = s.appendContent(dst, s.pending)
	}
	s.pending = ""
	s.finished = true
	return dst
}

func (s *Stream) drain(dst []Delta, eof bool) []Delta {
	for {
		if s.inRegion {
			end := s.p.f.findEnd(s.buf, &s.scan)
			if end < 0 {
				if !eof {
					s.scan.scanned = len(s.buf)
					return dst
				}
				end = len(s.buf)
			}
			region := s.buf[:end]
			s.buf = s.buf[end:]
			s.inRegion = false
			dst = s.region(dst, region)
			continue
		}
		start, hold := s.p.f.findStart(s.buf, s.atStart, eof)
		if start >= 0 {
			dst = s.content(dst, s.buf[:start])
			s.buf = s.buf[start:]
			s.inRegion, s.scan, s.atStart = true, scan{}, false
			continue
		}
		n := len(s.buf)
		if !eof {
			n = runeBoundary(s.buf, n-hold)
		}
		if n > 0 {
			s.atStart = false
		}
		dst = s.content(dst, s.buf[:n])
		s.buf = s.buf[n:]
		return dst
	}
}

// region emits a complete region: its calls, or its text as content.
func (s *Stream) region(dst []Delta, text string) []Delta {
	calls, ok := s.p.f.parse(text)
	if !ok {
		return s.content(dst, text)
	}
	for _, c := range calls {
		dst = append(dst, Delta{Tool: &ToolCallDelta{Index: s.calls, ID: s.p.newID(), Name: c.name, Arguments: c.args}})
		s.calls++
	}
	s.blank, s.pending, s.afterCall = true, "", true
	return dst
}

// content emits text outside the calls, holding a leading run of
// separators until the segment shows it is not blank.
func (s *Stream) content(dst []Delta, text string) []Delta {
	if text == "" {
		return dst
	}
	if s.blank {
		i := 0
		for i < len(text) && s.p.f.isSep(text[i]) {
			i++
		}
		if i == len(text) {
			s.pending += text
			return dst
		}
		s.blank = false
		if s.pending != "" {
			dst = s.appendContent(dst, s.pending)
			s.pending = ""
		}
	}
	return s.appendContent(dst, text)
}

// appendContent adds text to dst, merged into a last content delta of
// this call (never into one the caller has already been given).
func (s *Stream) appendContent(dst []Delta, text string) []Delta {
	if n := len(dst); n > s.base && dst[n-1].Tool == nil {
		dst[n-1].Content += text
		return dst
	}
	return append(dst, Delta{Content: text})
}

// runeBoundary lowers n so that s[:n] does not end inside a UTF-8 sequence
// that s may still complete.
func runeBoundary(s string, n int) int {
	for back := 1; back <= utf8.UTFMax && back <= n; back++ {
		c := s[n-back]
		if c < utf8.RuneSelf {
			return n
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[n-back : n]) {
				return n - back
			}
			return n
		}
	}
	return n
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of one of the markers.
func partialSuffix(s string, markers ...string) int {
	best := 0
	for _, m := range markers {
		for k := min(len(m)-1, len(s)); k > best; k-- {
			if strings.HasSuffix(s, m[:k]) {
				best = k
				break
			}
		}
	}
	return best
}

// firstMarker returns the index of the earliest marker in s and which
// marker it is, or -1 and the length of the suffix to hold back.
func firstMarker(s string, eof bool, markers ...string) (start, which, hold int) {
	start, which = -1, -1
	for i, m := range markers {
		if j := strings.Index(s, m); j >= 0 && (start < 0 || j < start) {
			start, which = j, i
		}
	}
	if start >= 0 || eof {
		return start, which, 0
	}
	return -1, -1, partialSuffix(s, markers...)
}

// isSpace is the separator set of formats whose calls are separated by
// whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
