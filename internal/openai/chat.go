package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"govllm/internal/apierr"
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
	ChatTemplateKwargs   map[string]any    `json:"chat_template_kwargs,omitempty"`
	Tools                []json.RawMessage `json:"tools,omitempty"`
	ToolChoice           json.RawMessage   `json:"tool_choice,omitempty"`
	StructuredFields
	SamplingFields
}

// ChatMessage is one message. Content may be a string, null, or an array of
// {"type": "text", "text": ...} parts (joined with "\n", as vLLM does).
type ChatMessage struct {
	Role    string      `json:"role"`
	Content ChatContent `json:"content"`
	Name    string      `json:"name,omitempty"`
}

// ChatContent is the text of a message.
type ChatContent string

// UnmarshalJSON accepts a string, null, or an array of text parts.
func (c *ChatContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*c = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return apierr.New("messages", "content must be a string or an array of text parts")
		}
		*c = ChatContent(s)
		return nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return apierr.New("messages", "content must be a string or an array of text parts")
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return apierr.New("messages", "content part type %q is not supported (only \"text\")", p.Type)
		}
		texts = append(texts, *p.Text)
	}
	*c = ChatContent(strings.Join(texts, "\n"))
	return nil
}

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// SamplingParams converts the request over the server defaults base.
// max_completion_tokens wins over max_tokens; when both are absent MaxTokens
// is 0 and the engine (llm.Preparer) fills max-model-len − prompt length.
func (r *ChatCompletionRequest) SamplingParams(base sampling.Params) (sampling.Params, error) {
	if err := r.check(); err != nil {
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
		if n < 0 || n > sampling.MaxLogprobs {
			return base, apierr.New("top_logprobs", "must be in [0, %d], got %d", sampling.MaxLogprobs, n)
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
	if len(r.Messages) == 0 {
		return apierr.New("messages", "must contain at least one message")
	}
	for i, m := range r.Messages {
		if !chatRoles[m.Role] {
			return apierr.New("messages", "messages[%d].role %q is not one of system, developer, user, assistant, tool", i, m.Role)
		}
	}
	switch {
	case r.Echo:
		return apierr.New("echo", "echo is not supported")
	case len(r.Tools) > 0:
		return apierr.New("tools", "tool calling is not supported")
	case len(r.ToolChoice) > 0 && !bytes.Equal(r.ToolChoice, []byte(`"none"`)) && !bytes.Equal(r.ToolChoice, []byte("null")):
		return apierr.New("tool_choice", "tool calling is not supported")
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
	Role    string `json:"role"`
	Content string `json:"content"`
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
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
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
