package reasoning

import "strings"

const (
	hStart     = "<|start|>"
	hChannel   = "<|channel|>"
	hMessage   = "<|message|>"
	hEnd       = "<|end|>"
	hReturn    = "<|return|>"
	hCall      = "<|call|>"
	hConstrain = "<|constrain|>"
)

var harmonyMarkers = []string{hStart, hChannel, hMessage, hEnd, hReturn, hCall, hConstrain}

// bodyKind is where a harmony message's body goes.
type bodyKind uint8

const (
	toContent bodyKind = iota
	toReasoning
	// verbatim: a message addressed to a tool (to=…) is kept whole, header
	// and terminator included, as content for the tool call parser.
	verbatim
)

// harmony splits gpt-oss's harmony output (vLLM
// gptoss_reasoning_parser.py; the format is OpenAI's harmony response
// format): messages <|start|>assistant<|channel|>CHANNEL …<|message|>BODY
// ended by <|end|>, <|return|> or <|call|>. The analysis channel is the
// reasoning; final and commentary bodies are content; headers and
// terminators are structure and dropped, except for messages to a tool.
// Text outside any message is content; a header the output ends inside is
// dropped.
type harmony struct {
	inBody bool
	kind   bodyKind
}

func (h *harmony) step(dst []Delta, s string, eof bool) ([]Delta, int) {
	if h.inBody {
		return h.body(dst, s, eof)
	}
	for _, t := range [...]string{hEnd, hReturn, hCall} {
		if strings.HasPrefix(s, t) {
			return dst, len(t) // a terminator with no message open
		}
	}
	if strings.HasPrefix(s, hStart) || strings.HasPrefix(s, hChannel) {
		i := strings.Index(s, hMessage)
		switch {
		case i >= 0:
			header := s[:i+len(hMessage)]
			h.inBody, h.kind = true, headerKind(header)
			if h.kind == verbatim {
				dst = emit(dst, header, false)
			}
			return dst, len(header)
		case eof:
			return dst, len(s)
		}
		return dst, 0
	}
	if !eof && (strings.HasPrefix(hStart, s) || strings.HasPrefix(hChannel, s) || partialToken(s)) {
		return dst, 0
	}
	h.inBody, h.kind = true, toContent // plain text
	return h.body(dst, s, eof)
}

// partialToken reports whether s could still grow into a terminator.
func partialToken(s string) bool {
	return strings.HasPrefix(hEnd, s) || strings.HasPrefix(hReturn, s) || strings.HasPrefix(hCall, s)
}

// headerKind reads a header: the channel after <|channel|>, and whether a
// recipient (to=…) is named anywhere in it.
func headerKind(header string) bodyKind {
	if strings.Contains(header, "to=") {
		return verbatim
	}
	_, ch, ok := strings.Cut(header, hChannel)
	if ok && (strings.HasPrefix(ch, "analysis ") || strings.HasPrefix(ch, "analysis<")) {
		return toReasoning
	}
	return toContent
}

// body emits a message body up to its terminator, or up to the next
// header when the model starts one without ending the body.
func (h *harmony) body(dst []Delta, s string, eof bool) ([]Delta, int) {
	i, m := firstOf(s, hEnd, hReturn, hCall, hStart, hChannel)
	if i < 0 {
		hold := 0
		if !eof {
			hold = partialSuffix(s, hEnd, hReturn, hCall, hStart, hChannel)
		}
		n := sendable(s, hold, eof)
		return h.emit(dst, s[:n]), n
	}
	dst = h.emit(dst, s[:i])
	h.inBody = false
	if m == hStart || m == hChannel {
		var n int
		dst, n = h.step(dst, s[i:], eof)
		return dst, i + n
	}
	if h.kind == verbatim {
		dst = emit(dst, m, false)
	}
	return dst, i + len(m)
}

func (h *harmony) emit(dst []Delta, text string) []Delta {
	return emit(dst, text, h.kind == toReasoning)
}
