package toolparser

import "testing"

// Outputs and expected calls from vLLM tests/tool_parsers/test_pythonic_tool_parser.py
// (which takes SIMPLE_FUNCTION_OUTPUT from Meta's Llama 3.2 prompt format
// documentation).
const (
	pySimple     = "get_weather(city='San Francisco', metric='celsius')"
	pySimpleArgs = `{"city": "San Francisco", "metric": "celsius"}`
	pyMoreTypes  = "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])"
	pyMoreArgs   = `{"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}`
)

var pythonicCases = []testCase{
	{name: "no_tool_call", output: "How can I help you today?", content: "How can I help you today?"},
	{name: "simple", output: "[" + pySimple + "]", calls: []tc{{"get_weather", pySimpleArgs}}},
	{name: "more_types", output: "[" + pyMoreTypes + "]", calls: []tc{{"register_user", pyMoreArgs}}},
	{name: "parameterless", output: "[get_weather()]", calls: []tc{{"get_weather", "{}"}}},
	{name: "empty_dict", output: "[do_something_cool(additional_data={})]", calls: []tc{{"do_something_cool", `{"additional_data": {}}`}}},
	{name: "empty_list", output: "[do_something_cool(steps=[])]", calls: []tc{{"do_something_cool", `{"steps": []}`}}},
	{name: "escaped_string", output: `[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]`,
		calls: []tc{{"get_weather", `{"city": "Martha's Vineyard", "metric": "\"cool units\""}`}}},
	{name: "parallel_calls", output: "[" + pySimple + ", " + pyMoreTypes + "]",
		calls: []tc{{"get_weather", pySimpleArgs}, {"register_user", pyMoreArgs}}},
	{name: "large_steps", output: "[get_weather(city='San Francisco', metric='celsius'), get_weather(), do_something_cool(steps=[])]",
		calls: []tc{{"get_weather", pySimpleArgs}, {"get_weather", "{}"}, {"do_something_cool", `{"steps": []}`}}},
	{name: "bad_sibling_dropped", output: "[bad(x=b'z'), " + pySimple + "]", calls: []tc{{"get_weather", pySimpleArgs}}},
	{name: "non_finite_rejected", output: "[calc(x=1e999), " + pySimple + "]", calls: []tc{{"get_weather", pySimpleArgs}}},
	// vLLM salvages the good call out of a list that is not valid Python
	// (non-streaming only, as its test says: a stream cannot); govllm
	// keeps such a list as content.
	{name: "unparsable_sibling_is_content", output: "[" + pySimple + ", f(a='x 'y', b='z')]", content: "[" + pySimple + ", f(a='x 'y', b='z')]"},
	{name: "unrecoverable_block", output: "[f(a='x 'y' 'z), g(b='p 'q' 'r)]", content: "[f(a='x 'y' 'z), g(b='p 'q' 'r)]"},
	{name: "mismatched_brackets", output: "[foo(x=1])]", content: "[foo(x=1])]"},
}

// Constructed: non-ASCII and negative numbers (expected arguments written
// with Python's json.dumps(…, ensure_ascii=False)), and a markdown link
// that starts like a call list.
var pythonicOwnCases = []testCase{
	{name: "unicode_negative", output: "[set_temp(ville='Zürich', delta=-2.5, n=-3, ok=False)]",
		calls: []tc{{"set_temp", `{"ville": "Zürich", "delta": -2.5, "n": -3, "ok": false}`}}},
	{name: "markdown_link", output: "[docs](https://example.com) say hi", content: "[docs](https://example.com) say hi"},
	{name: "leading_space", output: "  [get_weather()]", calls: []tc{{"get_weather", "{}"}}},
}

func TestPythonic(t *testing.T) {
	runCases(t, "pythonic", nil, pythonicCases)
	runCases(t, "pythonic", nil, pythonicOwnCases)
}
