// Package reasoning splits model output into reasoning_content and
// content, by the reasoning parser names of vLLM's --reasoning-parser:
//
//   - deepseek_r1: <think>…</think>; the opening tag may be missing (the
//     template put it in the prompt) and whitespace before it is dropped;
//     an output that ends before </think> is all reasoning.
//   - qwen3: the same, and a <tool_call> without </think> ends the
//     reasoning and begins the content; with Options.DisableThinking
//     (chat_template_kwargs enable_thinking=false) the output is all
//     content.
//   - gpt-oss: harmony messages; the analysis channel is the reasoning,
//     final and commentary bodies the content, a message to a tool
//     (to=…) is kept whole as content for the tool call parser.
//
// API: New(name, Options) returns a Parser (Names lists them; Markers
// are the texts it matches, which the output must keep, so it is
// detokenized with skip_special_tokens=false). Parser.Extract splits a
// whole output into a Result; Parser.NewStream returns a Stream fed the
// text deltas (Feed appends Deltas, each reasoning or content, in output
// order, never changing those already in dst; Finish flushes at the end).
//
// Invariant: Extract is defined as the stream over the whole text, and
// every decision of the stream depends only on the text it has seen, so
// the concatenated deltas equal the whole-text result for every split of
// the output (tested at every byte offset and fuzzed). The stream holds
// back only a suffix that may begin a tag, an incomplete UTF-8 sequence,
// and, at the start, whitespace that may precede <think>. "" means none
// (null on the wire).
//
// vLLM counterpart: vllm/reasoning/ (deepseek_r1_reasoning_parser.py,
// qwen3_reasoning_parser.py, gptoss_reasoning_parser.py). Imports nothing
// internal.
package reasoning
