package openai

import (
	"encoding/json"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
	"govllm/internal/sampling"
)

// ChatCompletionRequest is the body of POST /v1/chat/completions.
type ChatCompletionRequest struct {
	Model                string            `json:"model"`
	Messages             []ChatMessage     `json:"messages"`
	Stream               bool              `json:"stream,omitempty"`
	StreamOptions        *StreamOptions    `json:"stream_options,omitempty"`
	Logprobs             bool              `json:"logprobs,omitempty"`
	TopLogprobs          *int              `json:"top_logprobs,omitempty"`
	MaxCompletionTokens  *int              `json:"max_completion_tokens,omitempty"`
	Echo                 bool              `json:"echo,omitempty"`
	AddGenerationPrompt  *bool             `json:"add_generation_prompt,omitempty"`
	ContinueFinalMessage bool              `json:"continue_final_message,omitempty"`
	AddSpecialTokens     bool              `json:"add_special_tokens,omitempty"`
	ChatTemplate         *string           `json:"chat_template,omitempty"`
	ChatTemplateKwargs   *jsonvalue.Object `json:"chat_template_kwargs,omitempty"`
	// Tools, ToolChoice and ParallelToolCalls are validated by ParseTools.
	Tools             []json.RawMessage `json:"tools,omitempty"`
	ToolChoice        json.RawMessage   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	StructuredFields
	SamplingFields
}

// SamplingParams converts the request over the server defaults base.
// max_completion_tokens wins over max_tokens; when both are absent MaxTokens
// is 0 and the engine (llm.Preparer) fills max-model-len − prompt length.
func (r *ChatCompletionRequest) SamplingParams(base sampling.Params) (sampling.Params, error) {
	if err := r.check(); err != nil {
		return base, err
	}
	if err := r.checkPromptLogprobs(r.Stream); err != nil {
		return base, err
	}
	mt := r.MaxTokens
	if r.MaxCompletionTokens != nil {
		mt = r.MaxCompletionTokens
	}
	var lp *int
	switch {
	case r.Logprobs:
		n := 0
		if r.TopLogprobs != nil {
			n = *r.TopLogprobs
		}
		if n < -1 { // the cap is the server's (llm.Limits.MaxLogprobs)
			return base, apierr.New("top_logprobs", "must be non-negative or -1 (the whole vocabulary), got %d", n)
		}
		lp = &n
	case r.TopLogprobs != nil && *r.TopLogprobs != 0:
		return base, apierr.New("top_logprobs", "top_logprobs requires logprobs to be true")
	}
	p, err := r.toParams(base, mt, lp)
	if err != nil {
		return p, err
	}
	p.Structured, err = r.structured()
	return p, err
}

func (r *ChatCompletionRequest) check() error {
	if err := CheckMessages(r.Messages); err != nil {
		return err
	}
	if err := CheckTemplateKwargs(r.ChatTemplateKwargs); err != nil {
		return err
	}
	switch {
	case r.Echo:
		return apierr.New("echo", "echo is not supported")
	case r.ChatTemplate != nil:
		return apierr.New("chat_template", "a per-request chat template is not supported; start the server with --chat-template")
	case r.StreamOptions != nil && !r.Stream:
		return apierr.New("stream_options", "stream_options is only allowed when stream is true")
	case r.ContinueFinalMessage && r.AddGenerationPrompt != nil && *r.AddGenerationPrompt:
		return apierr.New("continue_final_message", "continue_final_message and add_generation_prompt cannot both be true")
	case r.ContinueFinalMessage && r.Messages[len(r.Messages)-1].Role != "assistant":
		return apierr.New("continue_final_message", "the final message must have role assistant")
	}
	return nil
}

// GenerationPrompt reports whether the template should add the assistant
// header (default true; false when continuing the final message).
func (r *ChatCompletionRequest) GenerationPrompt() bool {
	if r.AddGenerationPrompt != nil {
		return *r.AddGenerationPrompt
	}
	return !r.ContinueFinalMessage
}

// ChatCompletionResponse is a non-streaming chat completion.
type ChatCompletionResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"` // "chat.completion"
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   *Usage       `json:"usage,omitempty"`
	// Timings, with --enable-response-timings (see Timings).
	Timings any `json:"timings,omitempty"`
	// SystemFingerprint: see CompletionResponse.
	SystemFingerprint string `json:"system_fingerprint"`
	// PromptTokenIDs are the prompt's ids, with return_token_ids.
	PromptTokenIDs []int32 `json:"prompt_token_ids,omitempty"`
	// PromptLogprobs, with prompt_logprobs: see CompletionChoice.
	PromptLogprobs []PromptLogprob `json:"prompt_logprobs,omitempty"`
}

// ChatChoice is one of the n answers.
type ChatChoice struct {
	Index        int             `json:"index"`
	Message      ResponseMessage `json:"message"`
	Logprobs     *ChatLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
	StopReason   any             `json:"stop_reason"`         // null when none
	TokenIDs     []int32         `json:"token_ids,omitempty"` // with return_token_ids
}

// ResponseMessage is the assistant's message in a response.
type ResponseMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"` // null when the answer is only tool calls
	// ReasoningContent is the reasoning a --reasoning-parser split off
	// (vLLM's field; also sent as Reasoning, its newer name); null without.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	Reasoning        *string `json:"reasoning,omitempty"`
	// ToolCalls are the calls parsed from the output (tool_choice auto
	// with a --tool-call-parser, required, or a named function).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is one call in a response message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// ToolCallDelta is one entry of a streamed delta.tool_calls: the id, type
// and name on a call's first chunk, then arguments fragments.
type ToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function FunctionCallDelta `json:"function"`
}

// FunctionCallDelta is the function part of a ToolCallDelta.
type FunctionCallDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ChatCompletionChunk is one SSE event of a streaming chat completion.
type ChatCompletionChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"` // "chat.completion.chunk"
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *Usage            `json:"usage,omitempty"`
	// Timings, with --enable-response-timings, on the usage chunk.
	Timings any `json:"timings,omitempty"`
	// SystemFingerprint: see CompletionResponse.
	SystemFingerprint string `json:"system_fingerprint"`
	// PromptTokenIDs are the prompt's ids, with return_token_ids, in the
	// first chunk.
	PromptTokenIDs []int32 `json:"prompt_token_ids,omitempty"`
}

// ChatChunkChoice is one choice's delta.
type ChatChunkChoice struct {
	Index        int           `json:"index"`
	Delta        ChatDelta     `json:"delta"`
	Logprobs     *ChatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
	StopReason   any           `json:"stop_reason"`         // null when none
	TokenIDs     []int32       `json:"token_ids,omitempty"` // with return_token_ids
}

// ChatDelta is the new part of the message: the role on a choice's first
// chunk, then content.
type ChatDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ToolCalls        []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ChatLogprobs is the chat logprobs format.
type ChatLogprobs struct {
	Content []ChatTokenLogprob `json:"content"`
}

// ChatTokenLogprob is one sampled token with its top alternatives.
type ChatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []ChatTopLogprob `json:"top_logprobs"`
}

// ChatTopLogprob is one alternative at a position.
type ChatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}
