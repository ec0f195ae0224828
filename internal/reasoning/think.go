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

func (t *think) step(dst []Delta, s string, eof bool) ([]Delta, int) {
	switch {
	case t.content:
		return emit(dst, s, false), len(s)
	case !t.opened:
		return t.open(dst, s, eof)
	}
	ends := []string{thinkEnd}
	if t.toolCallEnds {
		ends = append(ends, toolCall)
	}
	if i, m := firstOf(s, ends...); i >= 0 {
		dst = emit(dst, s[:i], true)
		t.content = true
		if m == thinkEnd {
			return dst, i + len(thinkEnd)
		}
		return emit(dst, s[i:], false), len(s) // the tag begins the content
	}
	hold := 0
	if !eof {
		hold = partialSuffix(s, ends...)
	}
	n := sendable(s, hold, eof)
	return emit(dst, s[:n], true), n
}

// open drops leading whitespace and the opening tag when the output
// begins with them.
func (t *think) open(dst []Delta, s string, eof bool) ([]Delta, int) {
	rest := strings.TrimLeft(s, " \t\r\n")
	switch {
	case strings.HasPrefix(rest, thinkStart):
		t.opened = true
		return dst, len(s) - len(rest) + len(thinkStart)
	case !eof && strings.HasPrefix(thinkStart, rest):
		return dst, 0 // whitespace, or part of the tag, so far
	}
	t.opened = true
	return t.step(dst, s, eof)
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
