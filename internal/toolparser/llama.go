package toolparser

import "strings"

const pythonTag = "<|python_tag|>"

// llama3JSON is Llama 3.1/3.2's JSON tool calling (vLLM
// llama_tool_parser.py): {"name": …, "parameters": {…}} objects (or
// "arguments"), optionally after <|python_tag|>, several separated by ";".
// A call starts at a "{" followed by a "name" key, so ordinary braces in
// prose are not held back.
type llama3JSON struct{}

func newLlama3JSON([]Tool) (format, error) { return llama3JSON{}, nil }

func (llama3JSON) findStart(s string, _, eof bool) (int, int) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '<':
			rest := s[i:]
			if strings.HasPrefix(rest, pythonTag) {
				return i, 0
			}
			if !eof && strings.HasPrefix(pythonTag, rest) {
				return -1, len(rest)
			}
		case s[i] == '{':
			j := skipSpace(s, i+1)
			rest := s[j:]
			if strings.HasPrefix(rest, `"name"`) {
				return i, 0
			}
			if !eof && strings.HasPrefix(`"name"`, rest) {
				return -1, len(s) - i
			}
		}
	}
	return -1, 0
}

func (llama3JSON) findEnd(s string, st *scan) int {
	i := 0
	if strings.HasPrefix(s, pythonTag) {
		i = len(pythonTag)
	}
	return st.jsonAfter(s, skipSpace(s, i))
}

func (llama3JSON) isSep(c byte) bool { return isSpace(c) || c == ';' }

func (llama3JSON) parse(region string) ([]call, bool) {
	v, err := parseJSON(strings.TrimPrefix(region, pythonTag))
	if err != nil || v.k != kObj {
		return nil, false
	}
	c, ok := nameAndArguments(&v, "arguments", "parameters")
	if !ok {
		return nil, false
	}
	return []call{c}, true
}

// skipSpace returns the index of the first non-whitespace byte of s at or
// after i.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}
