package reasoning

import (
	"slices"
	"testing"
)

// vLLM tests/reasoning/test_deepseekr1_reasoning_parser.py, non-streaming
// expectations (its streaming ones differ only where vLLM's stream cannot
// see ahead: reasoning None instead of "", and the newline before <think>
// kept; govllm's stream holds that whitespace and matches the whole-text
// answer).
var deepSeekR1Cases = []testCase{
	{name: "simple_reasoning", output: "This is a reasoning section</think>This is the rest", reasoning: "This is a reasoning section", content: "This is the rest"},
	{name: "complete_reasoning", output: "This is a reasoning section</think>", reasoning: "This is a reasoning section"},
	{name: "no_content", output: "This is content", reasoning: "This is content"},
	{name: "multiple_lines", output: "This\nThat</think>This is the rest\nThat", reasoning: "This\nThat", content: "This is the rest\nThat"},
	{name: "shortest", output: "</think>This is the rest", content: "This is the rest"},
	{name: "reasoning_with_think", output: "<think>This is a reasoning section</think>This is the rest", reasoning: "This is a reasoning section", content: "This is the rest"},
	{name: "complete_reasoning_with_think", output: "<think>This is a reasoning section</think>", reasoning: "This is a reasoning section"},
	{name: "multiple_lines_with_think", output: "<think>This\nThat</think>This is the rest\nThat", reasoning: "This\nThat", content: "This is the rest\nThat"},
	{name: "think_no_end", output: "<think>This is a reasoning section", reasoning: "This is a reasoning section"},
	{name: "empty", output: ""},
	{name: "new_line", output: "\n<think>This is a reasoning section</think>\nThis is the rest", reasoning: "This is a reasoning section", content: "\nThis is the rest"},
}

// vLLM tests/reasoning/test_qwen3_reasoning_parser.py.
const qwenToolCallBody = "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>"

var qwen3Cases = []testCase{
	{name: "without_start_token", output: "This is a reasoning section</think>This is the rest", reasoning: "This is a reasoning section", content: "This is the rest"},
	{name: "without_start_token_complete_reasoning", output: "This is a reasoning section</think>", reasoning: "This is a reasoning section"},
	{name: "with_think", output: "<think>This is a reasoning section</think>This is the rest", reasoning: "This is a reasoning section", content: "This is the rest"},
	{name: "without_think", output: "This is the rest", reasoning: "This is the rest"},
	{name: "complete_reasoning", output: "<think>This is a reasoning section</think>", reasoning: "This is a reasoning section"},
	{name: "multiline_reasoning", output: "<think>This is a reasoning\nsection</think>This is the rest\nThat", reasoning: "This is a reasoning\nsection", content: "This is the rest\nThat"},
	{name: "only_open_tag", output: "<think>This is a reasoning section", reasoning: "This is a reasoning section"},
	{name: "truncated_no_start_token", output: "This is a reasoning section", reasoning: "This is a reasoning section"},
	{name: "tool_call_no_think_end", output: "I need to read the file.\n\n" + qwenToolCallBody, reasoning: "I need to read the file.\n\n", content: qwenToolCallBody},
	{name: "tool_call_with_think_no_end", output: "<think>I need to read the file.\n\n" + qwenToolCallBody, reasoning: "I need to read the file.\n\n", content: qwenToolCallBody},
}

// The same file's enable_thinking=False cases.
var qwen3DisabledCases = []testCase{
	{name: "plain_content", output: "This is plain content", content: "This is plain content"},
	{name: "no_think_tokens", output: "Some output without think tokens", content: "Some output without think tokens"},
	{name: "with_tool_call", output: "I need to read the file.\n\n" + qwenToolCallBody, content: "I need to read the file.\n\n" + qwenToolCallBody},
}

func TestDeepSeekR1(t *testing.T) { runCases(t, "deepseek_r1", Options{}, deepSeekR1Cases) }

func TestQwen3(t *testing.T) {
	runCases(t, "qwen3", Options{}, qwen3Cases)
	runCases(t, "qwen3", Options{DisableThinking: true}, qwen3DisabledCases)
}

// TestQwen3MultiTokenDeltas: the deltas of vLLM's
// test_reasoning_streaming_multi_token_deltas, fed as given.
func TestQwen3MultiTokenDeltas(t *testing.T) {
	p := newTestParser(t, "qwen3", Options{})
	for _, c := range []struct {
		deltas             []string
		reasoning, content string
	}{
		{[]string{"<think>This is a reasoning section", "</think>", "This is the rest"}, "This is a reasoning section", "This is the rest"},
		{[]string{"reasoning section", "</think>This is the rest"}, "reasoning section", "This is the rest"},
		{[]string{"<think>reasoning</think>"}, "reasoning", ""},
		{[]string{"reasoning section", "</think>content"}, "reasoning section", "content"},
		{[]string{"I need to read the file.\n\n", "<tool_call>\n<function=bash>"}, "I need to read the file.\n\n", "<tool_call>\n<function=bash>"},
	} {
		if got := streamed(t, p, c.deltas...); got != (Result{c.reasoning, c.content}) {
			t.Errorf("%q: got %+v, want reasoning %q content %q", c.deltas, got, c.reasoning, c.content)
		}
	}
}

func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"deepseek_r1", "gpt-oss", "qwen3"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if _, err := New("nope", Options{}); err == nil {
		t.Fatal("unknown parser accepted")
	}
}
