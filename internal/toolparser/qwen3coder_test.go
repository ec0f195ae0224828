package toolparser

import (
	"encoding/json"
	"testing"
)

// The tools, outputs and expected calls of vLLM
// tests/tool_parsers/test_qwen3coder_tool_parser.py (expected arguments
// are json.dumps of the test's dicts).
func qwenTools(t *testing.T, defs map[string]string) []Tool {
	t.Helper()
	var tools []Tool
	for name, params := range defs {
		if !json.Valid([]byte(params)) {
			t.Fatalf("schema of %s is not JSON", name)
		}
		tools = append(tools, Tool{Name: name, Parameters: json.RawMessage(params)})
	}
	return tools
}

const (
	qcWeatherParams = `{"type": "object", "properties": {"city": {"type": "string", "description": "The city name"}, "state": {"type": "string", "description": "The state code"}, "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]}}, "required": ["city", "state"]}`
	qcAreaParams    = `{"type": "object", "properties": {"shape": {"type": "string"}, "dimensions": {"type": "object"}, "precision": {"type": "integer"}}}`
	qcTypesParams   = `{"type": "object", "properties": {"int_param": {"type": "integer"}, "float_param": {"type": "float"}, "bool_param": {"type": "boolean"}, "str_param": {"type": "string"}, "obj_param": {"type": "object"}}}`
	qcAnyOfParams   = `{"type": "object", "properties": {
		"anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
		"anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
		"anyof_array": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
		"anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
		"type_as_array": {"type": ["integer", "null"]},
		"multi_non_null": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}}`
	qcSearchParams = `{"type": "object", "properties": {"query": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "count": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5}, "verbose": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}}`

	qcDallas     = "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
	qcDallasArgs = `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`
)

var qwenCases = []testCase{
	{name: "no_tools", output: "This is a test response without any tool calls", content: "This is a test response without any tool calls"},
	{name: "single_tool", output: qcDallas, calls: []tc{{"get_current_weather", qcDallasArgs}}},
	{name: "single_tool_with_content", output: "Sure! Let me check the weather for you." + qcDallas,
		content: "Sure! Let me check the weather for you.", calls: []tc{{"get_current_weather", qcDallasArgs}}},
	{name: "single_tool_multiline_param", output: "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{\"width\": 10, \n \"height\": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>",
		calls: []tc{{"calculate_area", `{"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2}`}}},
	{name: "parallel_tools", output: qcDallas + "\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nOrlando\n</parameter>\n<parameter=state>\nFL\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>",
		calls: []tc{{"get_current_weather", qcDallasArgs}, {"get_current_weather", `{"city": "Orlando", "state": "FL", "unit": "celsius"}`}}},
	{name: "tool_with_typed_params", output: "Let me calculate that area for you.<tool_call>\n<function=calculate_area>\n<parameter=shape>\ncircle\n</parameter>\n<parameter=dimensions>\n{\"radius\": 15.5}\n</parameter>\n<parameter=precision>\n3\n</parameter>\n</function>\n</tool_call>",
		content: "Let me calculate that area for you.", calls: []tc{{"calculate_area", `{"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3}`}}},
	{name: "fallback_no_tags", output: "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>",
		calls: []tc{{"get_current_weather", `{"city": "Dallas", "state": "TX"}`}}},
	{name: "missing_closing_parameter_tag", output: "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
		content: "Let me check the weather for you:\n", calls: []tc{{"get_current_weather", qcDallasArgs}}},
	{name: "missing_opening_tag", output: "I'll check the weather for you.\n\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
		content: "I'll check the weather for you.\n\n", calls: []tc{{"get_current_weather", qcDallasArgs}}},
	// vLLM drops the malformed call; govllm keeps it as content.
	{name: "none_tool_calls_filtered", output: "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n<tool_call>\n<function=get_current_weather>\n<parameter=city>Dallas</parameter>\n<parameter=state>TX</parameter>\n</function>\n</tool_call>",
		content: "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n", calls: []tc{{"get_current_weather", `{"city": "Dallas", "state": "TX"}`}}},
	{name: "no_double_serialization_string_args", output: "<tool_call>\n<function=greet>\n<parameter=message>hello world</parameter>\n</function>\n</tool_call>",
		calls: []tc{{"greet", `{"message": "hello world"}`}}},
	// Constructed: non-ASCII values and a nested object (expected
	// arguments written with Python's json.dumps(…, ensure_ascii=False)).
	{name: "unicode_nested", output: "Je calcule.<tool_call>\n<function=calculate_area>\n<parameter=shape>\ncercle ⭕ 半径\n</parameter>\n<parameter=dimensions>\n{\"r\": 1.50, \"unité\": \"cm\"}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>",
		content: "Je calcule.", calls: []tc{{"calculate_area", `{"shape": "cercle ⭕ 半径", "dimensions": {"r": 1.5, "unité": "cm"}, "precision": 2}`}}},
}

func TestQwen3Coder(t *testing.T) {
	tools := qwenTools(t, map[string]string{"get_current_weather": qcWeatherParams, "calculate_area": qcAreaParams})
	runCases(t, "qwen3_coder", tools, qwenCases)

	runCases(t, "qwen3_coder", qwenTools(t, map[string]string{"test_types": qcTypesParams}), []testCase{{
		name:   "type_conversion",
		output: "<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n<parameter=float_param>\n3.14\n</parameter>\n<parameter=bool_param>\ntrue\n</parameter>\n<parameter=str_param>\nhello world\n</parameter>\n<parameter=obj_param>\n{\"key\": \"value\"}\n</parameter>\n</function>\n</tool_call>",
		calls:  []tc{{"test_types", `{"int_param": 42, "float_param": 3.14, "bool_param": true, "str_param": "hello world", "obj_param": {"key": "value"}}`}},
	}})
	runCases(t, "qwen3_coder", qwenTools(t, map[string]string{"test_anyof": qcAnyOfParams}), []testCase{{
		name:   "anyof_type_conversion",
		output: "<tool_call>\n<function=test_anyof>\n<parameter=anyof_int>\n5\n</parameter>\n<parameter=anyof_str>\nhello\n</parameter>\n<parameter=anyof_array>\n[\"a\", \"b\", \"c\"]\n</parameter>\n<parameter=anyof_obj>\n{\"key\": \"value\"}\n</parameter>\n<parameter=type_as_array>\n42\n</parameter>\n<parameter=multi_non_null>\nsome text\n</parameter>\n</function>\n</tool_call>",
		calls:  []tc{{"test_anyof", `{"anyof_int": 5, "anyof_str": "hello", "anyof_array": ["a", "b", "c"], "anyof_obj": {"key": "value"}, "type_as_array": 42, "multi_non_null": "some text"}`}},
	}})
	runCases(t, "qwen3_coder", qwenTools(t, map[string]string{"update_record": `{"type": "object", "properties": {"data": {"anyOf": [{"type": "object"}, {"type": "null"}]}}}`}), []testCase{{
		name:   "anyof_parameter_not_double_encoded",
		output: "<tool_call>\n<function=update_record>\n<parameter=data>{\"key\": \"value\", \"count\": 42}</parameter>\n</function>\n</tool_call>",
		calls:  []tc{{"update_record", `{"data": {"key": "value", "count": 42}}`}},
	}})
	runCases(t, "qwen3_coder", qwenTools(t, map[string]string{"search_web": qcSearchParams}), []testCase{{
		name:   "anyof_streaming",
		output: "<tool_call>\n<function=search_web>\n<parameter=query>\nvllm tool parser\n</parameter>\n<parameter=count>\n10\n</parameter>\n<parameter=verbose>\ntrue\n</parameter>\n</function>\n</tool_call>",
		calls:  []tc{{"search_web", `{"query": "vllm tool parser", "count": 10, "verbose": true}`}},
	}})
}

func TestQwen3CoderRefusesBadSchema(t *testing.T) {
	if _, err := New("qwen3_coder", []Tool{{Name: "f", Parameters: json.RawMessage(`{"properties": 3}`)}}, Options{}); err == nil {
		t.Fatal("a schema whose properties are not an object was accepted")
	}
}
