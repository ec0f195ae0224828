package toolparser

import "testing"

// Outputs and expected calls from vLLM tests/tool_parsers/test_mistral_tool_parser.py
// (pre-v11 and v11 tokenizers; expected arguments are json.dumps of the
// test's dicts). Differences, named in the cases: text after the array
// stays content (vLLM's streaming test expects that; its non-streaming one
// drops it), and output that does not parse keeps its [TOOL_CALLS] marker.
var mistralCases = []testCase{
	{name: "no_tools", output: "This is a test", content: "This is a test"},
	{name: "pre_v11_single_tool_add", output: `[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]`,
		calls: []tc{{"add", `{"a": 3.5, "b": 4}`}}},
	{name: "pre_v11_single_tool_weather", output: `[TOOL_CALLS] [{"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]`,
		calls: []tc{{"get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`}}},
	{name: "pre_v11_argument_before_name", output: `[TOOL_CALLS] [{"arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}, "name": "get_current_weather"}]`,
		calls: []tc{{"get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`}}},
	{name: "pre_v11_name_in_argument", output: `[TOOL_CALLS] [{"arguments":{"name": "John Doe"}, "name": "get_age"}]`,
		calls: []tc{{"get_age", `{"name": "John Doe"}`}}},
	{name: "pre_v11_multiple_tools", output: `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]`,
		calls: []tc{{"add", `{"a": 3.5, "b": 4}`}, {"get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`}}},
	{name: "pre_v11_content_before_tool", output: `Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]`,
		content: "Hello", calls: []tc{{"add", `{"a": 1, "b": 2}`}}},
	{name: "pre_v11_trailing_data_kept", output: "[TOOL_CALLS] [{\"name\": \"get_current_weather\", \"arguments\":{\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}]\nextra trailing data",
		content: "\nextra trailing data", calls: []tc{{"get_current_weather", `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`}}},
	{name: "pre_v11_spaced", output: `[TOOL_CALLS]  [ {"name":"add" , "arguments" : {"a": 3, "b": 4} } ]`,
		calls: []tc{{"add", `{"a": 3, "b": 4}`}}},
	{name: "pre_v11_strings", output: `[TOOL_CALLS] [{"name": "add", "arguments":{"a": "3", "b": "4"}}]`,
		calls: []tc{{"add", `{"a": "3", "b": "4"}`}}},
	{name: "pre_v11_multiple_arguments_first", output: `[TOOL_CALLS] [{"arguments": {"a": 3.5, "b": 4}, "name": "add"}, {"arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}, "name": "get_current_weather"}]`,
		calls: []tc{{"add", `{"a": 3.5, "b": 4}`}, {"get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`}}},
	{name: "pre_v11_some_text_before", output: `Some text[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]`,
		content: "Some text", calls: []tc{{"add", `{"a": 1, "b": 2}`}}},
	{name: "pre_v11_not_json_marker_kept", output: "[TOOL_CALLS] not json at all", content: "[TOOL_CALLS] not json at all"},
	{name: "v11_single_tool_add", output: `[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}`,
		calls: []tc{{"add_this_and_that", `{"a": 3.5, "b": 4}`}}},
	{name: "v11_single_tool_weather", output: `[TOOL_CALLS]get_current_weather{"city": "San Francisco", "state": "CA", "unit": "celsius"}`,
		calls: []tc{{"get_current_weather", `{"city": "San Francisco", "state": "CA", "unit": "celsius"}`}}},
	{name: "v11_multiple_tool_calls", output: `[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}`,
		calls: []tc{{"add", `{"a": 3.5, "b": 4}`}, {"multiply", `{"a": 3, "b": 6}`}}},
	{name: "v11_content_before_tool", output: `bla[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}`,
		content: "bla", calls: []tc{{"add_this_and_that", `{"a": 3.5, "b": 4}`}}},
	{name: "v11_wrong_json", output: `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')"}`,
		content: "hi{hi", calls: []tc{{"bash", `{"command": "print(\"hello world!\")\nre.compile(r'{}')"}`}}},
	// vLLM returns the truncated arguments as a call; govllm keeps
	// incomplete JSON as content.
	{name: "v11_truncated_is_content", output: `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')`,
		content: `hi{hi[TOOL_CALLS]bash{"command": "print(\"hello world!\")\nre.compile(r'{}')`},
	{name: "v11_without_args_is_content", output: "[TOOL_CALLS]toolname_no_args", content: "[TOOL_CALLS]toolname_no_args"},
}

// The [ARGS] and [CALL_ID] forms, in the shape the chat templates in
// ../shared/templates render an assistant's calls:
// mistralai-Ministral-3-14B-Reasoning-2512.jinja writes
// '[TOOL_CALLS]' name '[ARGS]' arguments, Mistral-Small-3.2-24B-Instruct-2506.jinja
// '[TOOL_CALLS]' name '[CALL_ID]' id '[ARGS]' arguments. Arguments are
// written as Python's json.dumps(…, ensure_ascii=False) writes them.
var mistralTokenCases = []testCase{
	{name: "v13_args", output: `[TOOL_CALLS]get_weather[ARGS]{"city": "Zürich", "unit": "c"}[TOOL_CALLS]search[ARGS]{"query": "café \"best\"", "filters": {"tags": ["a"]}}`,
		calls: []tc{{"get_weather", `{"city": "Zürich", "unit": "c"}`}, {"search", `{"query": "café \"best\"", "filters": {"tags": ["a"]}}`}}},
	{name: "v11_call_id", output: `Sure.[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Bern"}`,
		content: "Sure.", calls: []tc{{"get_weather", `{"city": "Bern"}`}}},
}

func TestMistral(t *testing.T) {
	runCases(t, "mistral", nil, mistralCases)
	runCases(t, "mistral", nil, mistralTokenCases)
}
