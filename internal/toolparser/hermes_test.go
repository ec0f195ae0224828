package toolparser

import "testing"

// Outputs and expected calls from vLLM tests/tool_parsers/test_hermes_tool_parser.py
// (arguments as json.dumps(…, ensure_ascii=False) writes the expected dicts).
var hermesCases = []testCase{
	{name: "no_tool_call", output: "This is not a tool call.", content: "This is not a tool call."},
	{name: "just_forward_text", output: "This is some prior text that has nothing to do with tool calling.",
		content: "This is some prior text that has nothing to do with tool calling."},
	{name: "between_tags", output: "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}}\n</tool_call>",
		calls: []tc{{"final_answer", `{"trigger": true}`}}},
	{name: "until_eos", output: "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}}",
		calls: []tc{{"final_answer", `{"trigger": true}`}}},
	{name: "invalid_json", output: "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}",
		content: "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}"},
	{name: "temperature", output: "<tool_call>{\"name\": \"get_current_temperature\",\"arguments\": {\"location\":\"San Francisco, California, United States\", \"unit\": \"celsius\"}}</tool_call>",
		calls: []tc{{"get_current_temperature", `{"location": "San Francisco, California, United States", "unit": "celsius"}`}}},
	{name: "content_then_call", output: `Sure, let me check the weather.<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>`,
		content: "Sure, let me check the weather.", calls: []tc{{"get_weather", `{"city": "NYC"}`}}},
	{name: "content_and_call_in_one_chunk", output: `Hi!<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>`,
		content: "Hi!", calls: []tc{{"f", `{"x": 1}`}}},
	{name: "parallel", output: `<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call><tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>`,
		calls: []tc{{"search", `{"q": "cats"}`}, {"search", `{"q": "dogs"}`}}},
	{name: "serialized_arguments", output: "<tool_call>\n{\"name\": \"get_db_config\", \"arguments\": \"{\\\"param\\\": \\\"max_connections\\\"}\"}\n</tool_call>",
		calls: []tc{{"get_db_config", `{"param": "max_connections"}`}}},
	{name: "bare_string_arguments", output: "<tool_call>\n{\"name\": \"do_thing\", \"arguments\": \"hello\"}\n</tool_call>",
		calls: []tc{{"do_thing", `"hello"`}}},
	{name: "string_only_looks_structured", output: `<tool_call>{"name": "f", "arguments": "{hello world}"}</tool_call>`,
		calls: []tc{{"f", `"{hello world}"`}}},
	{name: "string_with_tail", output: `<tool_call>{"name": "f", "arguments": "{\"a\": 1} tail text"}</tool_call>`,
		calls: []tc{{"f", `"{\"a\": 1} tail text"`}}},
	{name: "string_open_bracket", output: `<tool_call>{"name": "f", "arguments": "[oops"}</tool_call>`,
		calls: []tc{{"f", `"[oops"`}}},
}

// Constructed cases: Qwen's multi-line parallel layout, nested arguments
// with non-ASCII text and escapes, and govllm's documented choices (text
// after a call stays content; a malformed call is content and does not
// take its well-formed neighbours with it). Expected arguments were
// written with Python's json.dumps(…, ensure_ascii=False).
var hermesOwnCases = []testCase{
	{name: "qwen_parallel_layout", output: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\"}}\n</tool_call>",
		calls: []tc{{"get_weather", `{"city": "Paris"}`}, {"get_time", `{"tz": "Europe/Paris"}`}}},
	{name: "nested_unicode", output: "Je regarde.\n\n<tool_call>\n{\"name\": \"meteo\", \"arguments\": {\"ville\":\"Zürich\",\"note\":\"\\u2600\\ufe0f 25°\",\"nested\":{\"days\":[1,2.50,{\"k\":null}],\"ok\":true}}}\n</tool_call>",
		content: "Je regarde.\n\n", calls: []tc{{"meteo", `{"ville": "Zürich", "note": "☀️ 25°", "nested": {"days": [1, 2.5, {"k": null}], "ok": true}}`}}},
	{name: "control_escapes", output: `<tool_call>{"name": "echo", "arguments": {"text": "line1\nline2\t\u0001"}}</tool_call>`,
		calls: []tc{{"echo", `{"text": "line1\nline2\t\u0001"}`}}},
	{name: "text_after_call", output: "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nDone.",
		content: "\nDone.", calls: []tc{{"f", `{}`}}},
	{name: "malformed_neighbour", output: "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"g\"}</tool_call>",
		content: "\n<tool_call>{\"name\": \"g\"}</tool_call>", calls: []tc{{"f", `{}`}}},
	{name: "partial_tag_is_text", output: "a <tool_ca b", content: "a <tool_ca b"},
}

func TestHermes(t *testing.T) {
	runCases(t, "hermes", nil, hermesCases)
	runCases(t, "hermes", nil, hermesOwnCases)
}
