package toolparser

import (
	"crypto/rand"
	"errors"
	"io"
)

// ParseRequired reads the output of a request with tool_choice "required":
// the JSON array of {"name": …, "parameters": {…}} objects that vLLM's
// structured-output schema for that choice forces (at least one), each
// becoming a call whose arguments are the parameters as Python's
// json.dumps(…, ensure_ascii=False) writes them, with vLLM's
// "chatcmpl-tool-" ids drawn from r (nil: crypto/rand). Any other text is
// an error (the constraint cannot produce one unless the output was cut).
func ParseRequired(text string, r io.Reader) ([]ToolCall, error) {
	v, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	if v.k != kArr || len(v.arr) == 0 {
		return nil, errors.New("toolparser: tool_choice required: want a non-empty JSON array of calls")
	}
	if r == nil {
		r = rand.Reader
	}
	p := &Parser{spec: spec{ids: idHex}, rand: r}
	calls := make([]ToolCall, 0, len(v.arr))
	for i := range v.arr {
		name, ok1 := v.arr[i].get("name")
		params, ok2 := v.arr[i].get("parameters")
		if !ok1 || !ok2 || name.k != kStr {
			return nil, errors.New("toolparser: tool_choice required: a call lacks its name or parameters")
		}
		calls = append(calls, ToolCall{ID: p.newID(), Name: name.s, Arguments: params.dumpString()})
	}
	return calls, nil
}

// NewID draws a tool call id as vLLM's make_tool_call_id does
// ("chatcmpl-tool-" and 32 hex digits) from r (nil: crypto/rand): the id
// of a named function's call.
func NewID(r io.Reader) string {
	if r == nil {
		r = rand.Reader
	}
	return (&Parser{spec: spec{ids: idHex}, rand: r}).newID()
}
