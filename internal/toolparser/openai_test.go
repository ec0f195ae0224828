package toolparser

import (
	"testing"

	"govllm/internal/reasoning"
)

// The conversations of vLLM tests/tool_parsers/test_openai_tool_parser.py,
// as gpt-oss generates their assistant turns in harmony text (message
// headers as the harmony renderer writes them:
// <|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>…),
// with vLLM's expected calls and content. They are split by the gpt-oss
// reasoning parser first, as in serving.
const (
	oaiAnalysis = "<|channel|>analysis<|message|>User asks: \"What is the weather in Tokyo?\" We need to use get_current_weather tool.<|end|>"
	oaiWeather  = "<|start|>assistant to=functions.get_current_weather<|channel|>commentary <|constrain|>json<|message|>{\"location\": \"Tokyo\"}<|call|>"
)

var openAICases = []testCase{
	{name: "no_tools", output: "<|channel|>final<|message|>This is a test<|return|>", content: "This is a test"},
	{name: "single_tool", output: oaiAnalysis + oaiWeather, calls: []tc{{"get_current_weather", `{"location": "Tokyo"}`}}},
	{name: "single_tool_multiline_args", output: oaiAnalysis + "<|start|>assistant to=functions.get_current_weather<|channel|>commentary <|constrain|>json<|message|>{\n\"location\": \"Tokyo\"\n}<|call|>",
		calls: []tc{{"get_current_weather", `{"location": "Tokyo"}`}}},
	{name: "multiple_tools", output: oaiAnalysis + oaiWeather +
		"<|start|>assistant to=functions.get_user_location<|channel|>commentary <|constrain|>json<|message|>{\"location\": \"Tokyo\"}<|call|>" +
		"<|start|>assistant to=functions.no_content_type<|channel|>commentary<|message|>{\"location\": \"Tokyo\"}<|call|>" +
		"<|start|>assistant to=functions.not_json_no_content_type<|channel|>commentary<|message|>foo<|call|>" +
		"<|start|>assistant to=functions.empty_args<|channel|>commentary <|constrain|>json<|message|>{}<|call|>" +
		"<|start|>assistant to=functions.no_args<|channel|>commentary <|constrain|>json<|message|><|call|>",
		calls: []tc{{"get_current_weather", `{"location": "Tokyo"}`}, {"get_user_location", `{"location": "Tokyo"}`},
			{"no_content_type", `{"location": "Tokyo"}`}, {"not_json_no_content_type", "foo"}, {"empty_args", "{}"}, {"no_args", ""}}},
	{name: "with_content", output: oaiAnalysis + oaiWeather + "<|start|>assistant<|channel|>final<|message|>This tool call will get the weather.<|return|>",
		content: "This tool call will get the weather.", calls: []tc{{"get_current_weather", `{"location": "Tokyo"}`}}},
	// The recipient after the channel, as gpt-oss also writes it.
	{name: "recipient_in_channel", output: "<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{\"location\":\"Tokyo\"}<|call|>",
		calls: []tc{{"get_current_weather", `{"location": "Tokyo"}`}}},
}

func TestOpenAI(t *testing.T) {
	split, err := reasoning.New("gpt-oss", reasoning.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := make([]testCase, len(openAICases))
	for i, c := range openAICases {
		cases[i] = c
		cases[i].output = split.Extract(c.output).Content
	}
	runCases(t, "openai", nil, cases)
}
