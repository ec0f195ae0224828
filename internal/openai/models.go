package openai

import (
	"encoding/json"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
)

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string  `json:"object"` // "list"
	Data   []Model `json:"data"`
}

// Model is one served model name.
type Model struct {
	ID          string `json:"id"`
	Object      string `json:"object"` // "model"
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	Root        string `json:"root,omitempty"`
	MaxModelLen int    `json:"max_model_len,omitempty"`
}

// TokenizeRequest is the body of POST /tokenize: vLLM's
// TokenizeCompletionRequest (prompt, add_special_tokens default true) or
// TokenizeChatRequest (messages rendered with the chat template first;
// tools, add_generation_prompt, continue_final_message,
// chat_template_kwargs; add_special_tokens default false).
type TokenizeRequest struct {
	Model                string            `json:"model,omitempty"`
	Prompt               *string           `json:"prompt,omitempty"`
	Messages             []ChatMessage     `json:"messages,omitempty"`
	AddSpecialTokens     *bool             `json:"add_special_tokens,omitempty"`
	AddGenerationPrompt  *bool             `json:"add_generation_prompt,omitempty"`
	ContinueFinalMessage bool              `json:"continue_final_message,omitempty"`
	ChatTemplate         *string           `json:"chat_template,omitempty"`
	ChatTemplateKwargs   *jsonvalue.Object `json:"chat_template_kwargs,omitempty"`
	Tools                []json.RawMessage `json:"tools,omitempty"`
	ReturnTokenStrs      bool              `json:"return_token_strs,omitempty"`
}

// CheckChat validates the chat form and returns its parsed tools (nil
// without tools) and whether to add the generation prompt (default true;
// false when continuing the final message, as for chat completions).
func (r *TokenizeRequest) CheckChat() (*ChatTools, bool, error) {
	if err := CheckMessages(r.Messages); err != nil {
		return nil, false, err
	}
	if err := CheckTemplateKwargs(r.ChatTemplateKwargs); err != nil {
		return nil, false, err
	}
	gen := !r.ContinueFinalMessage
	if r.AddGenerationPrompt != nil {
		gen = *r.AddGenerationPrompt
	}
	switch {
	case r.ChatTemplate != nil:
		return nil, false, apierr.New("chat_template", "a per-request chat template is not supported; start the server with --chat-template")
	case r.ContinueFinalMessage && gen:
		return nil, false, apierr.New("continue_final_message", "continue_final_message and add_generation_prompt cannot both be true")
	case r.ContinueFinalMessage && r.Messages[len(r.Messages)-1].Role != "assistant":
		return nil, false, apierr.New("continue_final_message", "the final message must have role assistant")
	}
	// /tokenize has no tool_choice: "none" renders the tools, parses nothing.
	tools, err := ParseTools(r.Tools, json.RawMessage(`"none"`), nil)
	return tools, gen, err
}

// CheckPrompt refuses chat-form fields on the prompt form.
func (r *TokenizeRequest) CheckPrompt() error {
	switch {
	case len(r.Messages) > 0:
		return apierr.New("messages", "give either prompt or messages, not both")
	case r.AddGenerationPrompt != nil, r.ContinueFinalMessage, r.ChatTemplate != nil, r.ChatTemplateKwargs != nil, r.Tools != nil:
		return apierr.New("prompt", "add_generation_prompt, continue_final_message, chat_template, chat_template_kwargs and tools apply to messages, not to a prompt")
	}
	return nil
}

// TokenizeResponse is the reply of POST /tokenize.
type TokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int32  `json:"tokens"`
	TokenStrs   []string `json:"token_strs,omitempty"`
}

// DetokenizeRequest is the body of POST /detokenize.
type DetokenizeRequest struct {
	Model  string  `json:"model,omitempty"`
	Tokens []int32 `json:"tokens"`
}

// DetokenizeResponse is the reply of POST /detokenize.
type DetokenizeResponse struct {
	Prompt string `json:"prompt"`
}

// VersionResponse is the reply of GET /version.
type VersionResponse struct {
	Version string `json:"version"`
}
