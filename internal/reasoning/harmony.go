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

func (h *harmony) step(out *emitter, s string, eof bool) int {
	if h.inBody {
		return h.body(out, s, eof)
	}
	for _, t := range [...]string{hEnd, hReturn, hCall} {
		if strings.HasPrefix(s, t) {
			return len(t) // a terminator with no message open
		}
	}
	if strings.HasPrefix(s, hStart) || strings.HasPrefix(s, hChannel) {
		i := strings.Index(s, hMessage)
		switch {
		case i >= 0:
			header := s[:i+len(hMessage)]
			h.inBody, h.kind = true, headerKind(header)
			if h.kind == verbatim {
				out.text(header, false)
			}
			return len(header)
		case eof:
			return len(s)
		}
		return 0
	}
	if !eof && (strings.HasPrefix(hStart, s) || strings.HasPrefix(hChannel, s) || partialToken(s)) {
		return 0
	}
	h.inBody, h.kind = true, toContent // plain text
	return h.body(out, s, eof)
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
func (h *harmony) body(out *emitter, s string, eof bool) int {
	i, m := firstOf(s, hEnd, hReturn, hCall, hStart, hChannel)
	if i < 0 {
		hold := 0
		if !eof {
			hold = partialSuffix(s, hEnd, hReturn, hCall, hStart, hChannel)
		}
		n := sendable(s, hold, eof)
		out.text(s[:n], h.kind == toReasoning)
		return n
	}
	out.text(s[:i], h.kind == toReasoning)
	h.inBody = false
	if m == hStart || m == hChannel {
		return i + h.step(out, s[i:], eof)
	}
	if h.kind == verbatim {
		out.text(m, false)
	}
	return i + len(m)
}
