package toolparser

import "testing"

// Outputs and expected calls from vLLM tests/tool_parsers/test_llama3_json_tool_parser.py.
// Where vLLM drops the text around the calls (content None), govllm keeps
// it: a stream cannot take back text it has sent, and the whole-text
// result is the stream's. Those cases say so in their name.
var llamaCases = []testCase{
	{name: "simple_text_kept", output: `Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?`,
		content: "Here is the result:  Would you like to know more?", calls: []tc{{"getOpenIncidentsTool", "{}"}}},
	{name: "with_arguments", output: `{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}`,
		calls: []tc{{"searchTool", `{"query": "test query", "limit": 10}`}}},
	{name: "no_json", output: "This is just some text without any tool calls", content: "This is just some text without any tool calls"},
	{name: "invalid_json", output: `{"name": "invalidTool", "parameters": {invalid json}`, content: `{"name": "invalidTool", "parameters": {invalid json}`},
	{name: "arguments_key", output: `{"name": "searchTool", "arguments": {"query": "test"}}`, calls: []tc{{"searchTool", `{"query": "test"}`}}},
	{name: "multiple_json", output: `{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}}`,
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}, {"searchTool", `{"query": "test2"}`}}},
	{name: "multiple_json_whitespace", output: `{"name": "searchTool", "parameters": {"query": "test1"}} ; {"name": "getOpenIncidentsTool", "parameters": {}} ; {"name": "searchTool", "parameters": {"query": "test2"}}`,
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}, {"searchTool", `{"query": "test2"}`}}},
	{name: "multiple_surrounding_text_kept", output: `Here are the results: {"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}} Would you like to know more?`,
		content: "Here are the results:  Would you like to know more?",
		calls:   []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}, {"searchTool", `{"query": "test2"}`}}},
	{name: "deeply_nested", output: `{"name": "complexTool", "parameters": {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}}}`,
		calls: []tc{{"complexTool", `{"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}}`}}},
	{name: "multiple_deep_nesting", output: `{"name": "simpleTool", "parameters": {"value": "test"}}; {"name": "complexTool", "parameters": {"config": {"database": {"connection": {"pool": {"size": 10}}}}}}`,
		calls: []tc{{"simpleTool", `{"value": "test"}`}, {"complexTool", `{"config": {"database": {"connection": {"pool": {"size": 10}}}}}`}}},
	{name: "brackets_in_strings", output: `{"name": "searchTool", "parameters": {"query": "test {value} [complex]","nested": {"inner": "more {brackets}"}}}`,
		calls: []tc{{"searchTool", `{"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}}`}}},
	{name: "escaped_quotes", output: `{"name": "parserTool", "parameters": {"text": "He said \"Hello {world}\""}}`,
		calls: []tc{{"parserTool", `{"text": "He said \"Hello {world}\""}`}}},
	{name: "missing_name", output: `{"parameters": {}}`, content: `{"parameters": {}}`},
	{name: "missing_parameters", output: `{"name": "toolWithoutParams"}`, content: `{"name": "toolWithoutParams"}`},
	{name: "brace_in_trailing_text", output: `{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.`,
		content: " I used {searchTool} for this.", calls: []tc{{"searchTool", `{"query": "test"}`}}},
	{name: "json_fragment_in_trailing_text", output: `{"name": "searchTool", "parameters": {"query": "test"}} The arguments I passed were {"query": "test"}`,
		content: ` The arguments I passed were {"query": "test"}`, calls: []tc{{"searchTool", `{"query": "test"}`}}},
	{name: "separator_semicolon_space", output: `{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}`,
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}}},
	{name: "separator_semicolon", output: `{"name": "searchTool", "parameters": {"query": "test1"}};{"name": "getOpenIncidentsTool", "parameters": {}}`,
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}}},
	{name: "separator_semicolon_newline", output: "{\"name\": \"searchTool\", \"parameters\": {\"query\": \"test1\"}};\n{\"name\": \"getOpenIncidentsTool\", \"parameters\": {}}",
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}}},
	{name: "separator_newline", output: "{\"name\": \"searchTool\", \"parameters\": {\"query\": \"test1\"}}\n{\"name\": \"getOpenIncidentsTool\", \"parameters\": {}}",
		calls: []tc{{"searchTool", `{"query": "test1"}`}, {"getOpenIncidentsTool", "{}"}}},
	// Llama 3.1's model card: a JSON call may follow <|python_tag|>.
	{name: "python_tag", output: `<|python_tag|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}`,
		calls: []tc{{"get_weather", `{"city": "Tokyo"}`}}},
}

// Constructed: nested arguments with non-ASCII text after prose (expected
// arguments written with Python's json.dumps(…, ensure_ascii=False)).
var llamaOwnCases = []testCase{
	{name: "nested_unicode", output: "Je traduis.\n{\"name\": \"traduire\", \"parameters\": {\"texte\": \"Grüße, 世界 🌍\", \"options\": {\"niveaux\": [1, {\"x\": \"\\u00fc\"}], \"ok\": false}}}",
		content: "Je traduis.\n", calls: []tc{{"traduire", `{"texte": "Grüße, 世界 🌍", "options": {"niveaux": [1, {"x": "ü"}], "ok": false}}`}}},
}

func TestLlama3JSON(t *testing.T) {
	runCases(t, "llama3_json", nil, llamaCases)
	runCases(t, "llama3_json", nil, llamaOwnCases)
}
