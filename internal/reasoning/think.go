package reasoning

import "strings"

const (
	thinkStart = "<think>"
	thinkEnd   = "</think>"
	toolCall   = "<tool_call>"
)

// think splits <think>…</think> output (vLLM deepseek_r1_reasoning_parser.py
// and qwen3_reasoning_parser.py). The opening tag is optional, since the
// DeepSeek-R1 and newer Qwen3 templates put it in the prompt; whitespace
// before it is dropped. Everything up to </think> is reasoning; an output
// that ends before </think> is all reasoning (it was cut off while
// thinking).
type think struct {
	// toolCallEnds: a <tool_call> ends the reasoning too and begins the
	// content (qwen3).
	toolCallEnds bool
	// content: the output is all content (qwen3 with thinking disabled).
	content bool
	opened  bool // past the optional opening tag
}

func (t *think) step(out *emitter, s string, eof bool) int {
	switch {
	case t.content:
		out.text(s, false)
		return len(s)
	case !t.opened:
		return t.open(out, s, eof)
	}
	ends := []string{thinkEnd}
	if t.toolCallEnds {
		ends = append(ends, toolCall)
	}
	if i, m := firstOf(s, ends...); i >= 0 {
		out.text(s[:i], true)
		t.content = true
		if m == thinkEnd {
			return i + len(thinkEnd)
		}
		out.text(s[i:], false) // the tag begins the content
		return len(s)
	}
	hold := 0
	if !eof {
		hold = partialSuffix(s, ends...)
	}
	n := sendable(s, hold, eof)
	out.text(s[:n], true)
	return n
}

// open drops leading whitespace and the opening tag when the output
// begins with them.
func (t *think) open(out *emitter, s string, eof bool) int {
	rest := strings.TrimLeft(s, " \t\r\n")
	switch {
	case strings.HasPrefix(rest, thinkStart):
		t.opened = true
		return len(s) - len(rest) + len(thinkStart)
	case !eof && strings.HasPrefix(thinkStart, rest):
		return 0 // whitespace, or part of the tag, so far
	}
	t.opened = true
	return t.step(out, s, eof)
}

// firstOf returns the index of the earliest of the markers in s, and which.
func firstOf(s string, markers ...string) (int, string) {
	best, which := -1, ""
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (best < 0 || i < best) {
			best, which = i, m
		}
	}
	return best, which
}
