package toolparser

import "testing"

// Outputs from vLLM tests/tool_parsers/test_granite_tool_parser.py
// (expected arguments are json.dumps(…, ensure_ascii=False) of the
// test's values). vLLM drops the text around the call in
// surrounding_text (and marks the test xfail); govllm keeps it.
var graniteCases = []testCase{
	{name: "no_tool_calls", output: "This is a regular response without any tool calls.", content: "This is a regular response without any tool calls."},
	{name: "single", output: `<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`,
		calls: []tc{{"get_weather", `{"city": "Tokyo"}`}}},
	{name: "string_prefix", output: `<tool_call> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`,
		calls: []tc{{"get_weather", `{"city": "Tokyo"}`}}},
	{name: "parallel", output: "<|tool_call|> [\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}},\n  {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\n]",
		calls: []tc{{"get_weather", `{"city": "Tokyo"}`}, {"get_time", `{"timezone": "Asia/Tokyo"}`}}},
	{name: "various_data_types", output: "<tool_call> [{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"string_field\": \"hello\",\n    \"int_field\": 42,\n    \"float_field\": 3.14,\n    \"bool_field\": true,\n    \"null_field\": null,\n    \"array_field\": [\"a\", \"b\", \"c\"],\n    \"object_field\": {\"nested\": \"value\"},\n    \"empty_array\": [],\n    \"empty_object\": {}\n  }\n}]",
		calls: []tc{{"test_function", `{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}`}}},
	{name: "empty_arguments", output: `<|tool_call|> [{"name": "refresh", "arguments": {}}]`, calls: []tc{{"refresh", "{}"}}},
	{name: "surrounding_text_kept", output: "Let me check the weather for you.\n<|tool_call|> [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nI'll get that information.",
		content: "Let me check the weather for you.\n\nI'll get that information.", calls: []tc{{"get_weather", `{"city": "Tokyo"}`}}},
	{name: "escaped_strings_unicode", output: "<tool_call> [{\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"quoted\": \"He said \\\"hello\\\"\",\n    \"path\": \"C:\\\\Users\\\\file.txt\",\n    \"newline\": \"line1\\nline2\",\n    \"unicode\": \"emoji: 🎉\"\n  }\n}]",
		calls: []tc{{"test_function", `{"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2", "unicode": "emoji: 🎉"}`}}},
	{name: "malformed_truncated", output: `<|tool_call|> [{"name": "func", "arguments": {`, content: `<|tool_call|> [{"name": "func", "arguments": {`},
	{name: "malformed_not_array", output: `<|tool_call|> {"name": "func", "arguments": {}}`, content: `<|tool_call|> {"name": "func", "arguments": {}}`},
	{name: "malformed_no_marker", output: `[{"name": "func", "arguments": "not a dict"}]`, content: `[{"name": "func", "arguments": "not a dict"}]`},
	{name: "malformed_not_call", output: `Some text [{"name": "func"}]`, content: `Some text [{"name": "func"}]`},
	{name: "arguments_before_name", output: `<|tool_call|> [{"arguments": {"city": "Tokyo"}, "name": "get_weather"}, {"arguments": {"timezone": "Asia/Tokyo"}, "name": "get_time"}]`,
		calls: []tc{{"get_weather", `{"city": "Tokyo"}`}, {"get_time", `{"timezone": "Asia/Tokyo"}`}}},
	{name: "single_delta_parallel", output: `<|tool_call|>[{"name": "get_weather", "arguments": {"x": 42}}, {"name": "b", "arguments": {"y": 7}}]`,
		calls: []tc{{"get_weather", `{"x": 42}`}, {"b", `{"y": 7}`}}},
}

func TestGranite(t *testing.T) { runCases(t, "granite", nil, graniteCases) }
