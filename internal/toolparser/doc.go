// Package toolparser turns model output into OpenAI tool calls, by the
// tool-call parser names of vLLM's --tool-call-parser.
package toolparser
