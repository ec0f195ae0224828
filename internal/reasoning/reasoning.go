package reasoning

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Result is the whole-text split of a model output; "" means none (JSON
// null).
type Result struct {
	Reasoning string
	Content   string
}

// Delta is one streamed event, in output order: reasoning text or content
// text, never both.
type Delta struct {
	Reasoning string
	Content   string
}

// Options carry the request's chat_template_kwargs that change what the
// model writes.
type Options struct {
	// DisableThinking is enable_thinking=false: Qwen3's template then
	// closes an empty think block in the prompt, and the output is all
	// content.
	DisableThinking bool
}

// machine is one output syntax, driven over the text not yet decided.
type machine interface {
	// step decides a prefix of s: it appends what it emits to out and
	// returns how many bytes it consumed. It may consume nothing only
	// when it needs more text (never at eof).
	step(out *emitter, s string, eof bool) int
}

type spec struct {
	markers []string
	make    func(Options) machine
}

// registry holds the parsers by vLLM's --reasoning-parser names.
var registry = map[string]spec{
	"deepseek_r1": {markers: []string{thinkStart, thinkEnd}, make: func(Options) machine { return &think{} }},
	"qwen3": {markers: []string{thinkStart, thinkEnd}, make: func(o Options) machine {
		return &think{toolCallEnds: true, content: o.DisableThinking}
	}},
	"gpt-oss": {markers: harmonyMarkers, make: func(Options) machine { return &harmony{} }},
}

// Names lists the parser names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Parser splits one request's outputs. It is safe for concurrent use.
type Parser struct {
	name string
	spec spec
	opts Options
}

// New returns the parser registered as name.
func New(name string, opts Options) (*Parser, error) {
	sp, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("reasoning: unknown reasoning parser %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return &Parser{name: name, spec: sp, opts: opts}, nil
}

// Name is the parser's registry name.
func (p *Parser) Name() string { return p.name }

// Markers are the texts the parser matches that tokenizers may hold as
// special tokens: the output must be detokenized with
// skip_special_tokens=false for the parser to see them.
func (p *Parser) Markers() []string { return slices.Clone(p.spec.markers) }

// Extract splits a whole output; it is what streaming any split of it
// gives.
func (p *Parser) Extract(text string) Result {
	s := p.NewStream()
	var r Result
	var reasoning, content strings.Builder
	for _, d := range s.Finish(s.Feed(nil, text)) {
		reasoning.WriteString(d.Reasoning)
		content.WriteString(d.Content)
	}
	r.Reasoning, r.Content = reasoning.String(), content.String()
	return r
}

// Stream splits one output as it is generated.
type Stream struct {
	m        machine
	buf      string
	finished bool
}

// NewStream starts splitting one output.
func (p *Parser) NewStream() *Stream { return &Stream{m: p.spec.make(p.opts)} }

// Feed appends the deltas text decides to dst.
func (s *Stream) Feed(dst []Delta, text string) []Delta {
	if s.finished {
		panic("reasoning: Feed after Finish")
	}
	s.buf += text
	return s.drain(dst, false)
}

// Finish appends what the end of the output decides.
func (s *Stream) Finish(dst []Delta) []Delta {
	if s.finished {
		return dst
	}
	s.finished = true
	return s.drain(dst, true)
}

func (s *Stream) drain(dst []Delta, eof bool) []Delta {
	out := emitter{dst: dst, base: len(dst)}
	for s.buf != "" {
		n := s.m.step(&out, s.buf, eof)
		if n == 0 {
			break
		}
		s.buf = s.buf[n:]
	}
	return out.dst
}

// emitter collects the deltas of one Feed or Finish.
type emitter struct {
	dst  []Delta
	base int // len(dst) before: those deltas are the caller's already
}

// text appends reasoning or content text, merged into a last delta of the
// same kind from this call.
func (e *emitter) text(text string, reasoning bool) {
	if text == "" {
		return
	}
	if n := len(e.dst); n > e.base {
		last := &e.dst[n-1]
		if reasoning && last.Content == "" {
			last.Reasoning += text
			return
		}
		if !reasoning && last.Reasoning == "" {
			last.Content += text
			return
		}
	}
	if reasoning {
		e.dst = append(e.dst, Delta{Reasoning: text})
		return
	}
	e.dst = append(e.dst, Delta{Content: text})
}

// sendable returns how much of s can be released when the last hold bytes
// may begin a marker: not the held suffix, nor an incomplete UTF-8
// sequence at the end.
func sendable(s string, hold int, eof bool) int {
	if eof {
		return len(s)
	}
	n := len(s) - hold
	for back := 1; back <= utf8.UTFMax && back <= n; back++ {
		c := s[n-back]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRuneInString(s[n-back : n]) {
				return n - back
			}
			break
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
