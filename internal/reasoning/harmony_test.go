package reasoning

import "testing"

// Outputs of vLLM tests/reasoning/test_gptoss_reasoning_parser.py (built
// from its REASONING_SECTION_START, ASSISTANT_CONTENT_START_PREFIX/SUFFIX
// and END pieces). That file only checks is_reasoning_end; the expected
// split follows the harmony format's definition of the channels (analysis:
// chain of thought; final: the answer), and where vLLM says the reasoning
// has ended (is_reasoning_end true) the content has begun here.
const (
	hReasoningStart  = "<|end|><|start|>assistant<|channel|>analysis<|message|>"
	hContentPrefix   = "<|end|><|start|>assistant<|channel|>final"
	hContentStart    = hContentPrefix + "<|message|>"
	hWeatherCallText = "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"location\": \"San Francisco\"}<|call|>"
)

var gptOSSCases = []testCase{
	{name: "basic_content", output: hReasoningStart + "This is reasoning" + hContentStart + "This is the rest",
		reasoning: "This is reasoning", content: "This is the rest"},
	{name: "basic_reasoning_only", output: hReasoningStart + "This is reasoning<|end|>", reasoning: "This is reasoning"},
	{name: "incomplete_prefix_only", output: hReasoningStart + "This is reasoning" + hContentPrefix, reasoning: "This is reasoning"},
	{name: "content_1_no_suffix", output: hReasoningStart + "This is reasoning" + hContentPrefix + "<|constrain|> JSON ", reasoning: "This is reasoning"},
	{name: "content_1", output: hReasoningStart + "This is reasoning" + hContentPrefix + "<|constrain|> JSON <|message|>", reasoning: "This is reasoning"},
	{name: "content_1_with_content", output: hReasoningStart + "This is reasoning" + hContentPrefix + "<|constrain|> JSON <|message|>This is the rest",
		reasoning: "This is reasoning", content: "This is the rest"},
	{name: "content_2", output: hReasoningStart + "This is reasoning" + hContentPrefix + "<|constrain|>ReplyAction <|message|>This is the rest",
		reasoning: "This is reasoning", content: "This is the rest"},
	// A call in the shape ../shared/templates/openai-gpt-oss-120b.jinja
	// renders one: kept whole for the tool call parser.
	{name: "function_call", output: "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>" + hWeatherCallText,
		reasoning: "Need to use function get_weather.", content: hWeatherCallText},
	{name: "plain_text", output: "No harmony here, é.", content: "No harmony here, é."},
}

func TestGptOSS(t *testing.T) { runCases(t, "gpt-oss", Options{}, gptOSSCases) }
