package toolparser

import "strings"

const (
	mistralCalls  = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralCallID = "[CALL_ID]"
)

// mistral is Mistral's [TOOL_CALLS] format (vLLM mistral_tool_parser.py) in
// both its forms: before tokenizer v11 one JSON array of {"name",
// "arguments"} objects after the marker; from v11 one call per marker,
// [TOOL_CALLS]name[ARGS]{…} (v13), [TOOL_CALLS]name[CALL_ID]id[ARGS]{…}, or
// [TOOL_CALLS]name{…} (the [ARGS] token decoded away).
type mistral struct{}

func newMistral([]Tool) (format, error) { return mistral{}, nil }

func (mistral) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, mistralCalls)
	return start, hold
}

func (mistral) isSep(c byte) bool { return isSpace(c) }

// findEnd finds the JSON value of the call: the array right after the
// marker, or the object after the name and its tokens.
func (mistral) findEnd(s string, st *scan) int {
	i := skipSpace(s, len(mistralCalls))
	if i >= len(s) || s[i:] == "[" {
		return -1
	}
	if s[i] == '[' && s[i+1] != 'A' && s[i+1] != 'C' {
		return st.bracketEnd(s, i, false) // the pre-v11 array
	}
	i = nameEnd(s, i)
	if strings.HasPrefix(s[i:], mistralCallID) {
		i = alnumEnd(s, i+len(mistralCallID))
	}
	if strings.HasPrefix(s[i:], mistralArgs) {
		i += len(mistralArgs)
	}
	if rest := s[i:]; strings.HasPrefix(mistralArgs, rest) || strings.HasPrefix(mistralCallID, rest) {
		return -1 // the end of s, or a token still arriving
	}
	return st.jsonAfter(s, i)
}

func nameEnd(s string, i int) int {
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	return i
}

func alnumEnd(s string, i int) int {
	for i < len(s) && isAlnum(s[i]) {
		i++
	}
	return i
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

func (mistral) parse(region string) ([]call, bool) {
	body := strings.TrimLeft(strings.TrimPrefix(region, mistralCalls), " \t\r\n")
	if strings.HasPrefix(body, "[") {
		return parseCallArray(body)
	}
	i := nameEnd(body, 0)
	name, rest := body[:i], body[i:]
	if strings.HasPrefix(rest, mistralCallID) {
		rest = rest[alnumEnd(rest, len(mistralCallID)):]
	}
	rest = strings.TrimPrefix(rest, mistralArgs)
	v, err := parseJSON(rest)
	if name == "" || err != nil || v.k != kObj {
		return nil, false
	}
	return []call{{name: name, args: v.dumpString()}}, true
}

// parseCallArray reads a JSON array of {"name", "arguments"} objects.
func parseCallArray(text string) ([]call, bool) {
	v, err := parseJSON(text)
	if err != nil || v.k != kArr || len(v.arr) == 0 {
		return nil, false
	}
	calls := make([]call, 0, len(v.arr))
	for i := range v.arr {
		c, ok := nameAndArguments(&v.arr[i], "arguments")
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}
