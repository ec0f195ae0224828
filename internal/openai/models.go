package openai

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

// TokenizeRequest is the body of POST /tokenize: either a prompt or chat
// messages (rendered with the chat template first).
type TokenizeRequest struct {
	Model               string        `json:"model,omitempty"`
	Prompt              *string       `json:"prompt,omitempty"`
	Messages            []ChatMessage `json:"messages,omitempty"`
	AddSpecialTokens    *bool         `json:"add_special_tokens,omitempty"`
	AddGenerationPrompt *bool         `json:"add_generation_prompt,omitempty"`
	ReturnTokenStrs     bool          `json:"return_token_strs,omitempty"`
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
