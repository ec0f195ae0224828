package toolparser

import "testing"

// Outputs from vLLM tests/tool_parsers/test_deepseekv3_tool_parser.py; the
// expected arguments are the text the model wrote (vLLM passes it on).
var deepSeekCases = []testCase{
	{name: "no_tool_calls", output: "How can I help you today? I can check weather for you.",
		content: "How can I help you today? I can check weather for you."},
	{name: "single", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\", \"unit\": \"celsius\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []tc{{"get_weather", `{"city": "Tokyo", "unit": "celsius"}`}}},
	{name: "parallel", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\", \"unit\": \"celsius\"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search_hotels\n```json\n{\"location\": \"Tokyo\", \"check_in\": \"2025-01-15\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []tc{{"get_weather", `{"city": "Tokyo", "unit": "celsius"}`}, {"search_hotels", `{"location": "Tokyo", "check_in": "2025-01-15"}`}}},
	{name: "various_data_types", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>test_function\n```json\n{\"string_field\": \"hello\", \"int_field\": 42, \"float_field\": 3.14, \"bool_field\": true, \"null_field\": null, \"array_field\": [\"a\", \"b\", \"c\"], \"object_field\": {\"nested\": \"value\"}, \"empty_array\": [], \"empty_object\": {}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []tc{{"test_function", `{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}`}}},
	{name: "empty_arguments", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []tc{{"get_current_time", "{}"}}},
	{name: "surrounding_text", output: "Let me check the weather for you.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		content: "Let me check the weather for you.", calls: []tc{{"get_weather", `{"city": "Paris"}`}}},
	{name: "escaped_strings", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>send_message\n```json\n{\"text\": \"He said \\\"hello\\\"\", \"path\": \"C:\\\\Users\\\\file\", \"newline\": \"line1\\nline2\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []tc{{"send_message", `{"text": "He said \"hello\"", "path": "C:\\Users\\file", "newline": "line1\nline2"}`}}},
	{name: "malformed_unclosed_json", output: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		content: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	{name: "malformed_no_call_begin", output: "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁calls▁end｜>",
		content: "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```<｜tool▁calls▁end｜>"},
}

// Constructed: non-ASCII, nested arguments (passed on as written).
var deepSeekOwnCases = []testCase{
	{name: "unicode_nested", output: "好的。<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Zürich\", \"state\": {\"canton\": \"ZH\", \"codes\": [8001, 8002.5]}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		content: "好的。", calls: []tc{{"get_weather", `{"city": "Zürich", "state": {"canton": "ZH", "codes": [8001, 8002.5]}}`}}},
}

func TestDeepSeekV3(t *testing.T) {
	runCases(t, "deepseek_v3", nil, deepSeekCases)
	runCases(t, "deepseek_v3", nil, deepSeekOwnCases)
}
