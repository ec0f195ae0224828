package toolparser

import "strings"

const (
	hermesStart = "<tool_call>"
	hermesEnd   = "</tool_call>"
)

// hermes is the Hermes 2 Pro / Qwen2.5 / Qwen3 format (vLLM
// hermes_tool_parser.py): each call is <tool_call>{"name": …, "arguments":
// {…}}</tool_call>; a call the output ends inside runs to the end.
type hermes struct{}

func newHermes([]Tool) (format, error) { return hermes{}, nil }

func (hermes) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, hermesStart)
	return start, hold
}

func (hermes) findEnd(s string, st *scan) int { return literalEnd(s, st.scanned, hermesEnd) }

func (hermes) isSep(c byte) bool { return isSpace(c) }

// parse reads one {"name", "arguments"} object between the tags.
func (hermes) parse(region string) ([]call, bool) {
	body := strings.TrimPrefix(region, hermesStart)
	body = strings.TrimSuffix(body, hermesEnd)
	v, err := parseJSON(body)
	if err != nil {
		return nil, false
	}
	c, ok := nameAndArguments(&v, "arguments")
	if !ok {
		return nil, false
	}
	return []call{c}, true
}

// literalEnd returns the length of the region that ends with the literal
// end marker, searching only the text after what was scanned before.
func literalEnd(s string, scanned int, end string) int {
	from := max(0, scanned-len(end)+1)
	if i := strings.Index(s[from:], end); i >= 0 {
		return from + i + len(end)
	}
	return -1
}

// nameAndArguments reads a {"name": string, <argsKey>: value} object, as
// vLLM's JSON parsers do: the arguments are json.dumps of the value, except
// that a string that itself holds a JSON object is that object (Granite 4
// and some Qwen fine-tunes serialize the arguments; vLLM's hermes tests
// pass them through once-encoded).
func nameAndArguments(v *value, argsKeys ...string) (call, bool) {
	name, ok := v.get("name")
	if !ok || name.k != kStr || name.s == "" {
		return call{}, false
	}
	for _, key := range argsKeys {
		args, ok := v.get(key)
		if !ok {
			continue
		}
		if args.k == kStr {
			if inner, err := parseJSON(args.s); err == nil && inner.k == kObj {
				args = &inner
			}
		}
		return call{name: name.s, args: args.dumpString()}, true
	}
	return call{}, false
}
