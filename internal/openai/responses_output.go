package openai

// Response is the Responses API response object (OpenAI's, as vLLM's
// ResponsesResponse fills it): the output items, the usage, and the echo
// of the request's parameters.
type Response struct {
	ID                 string              `json:"id"`
	Object             string              `json:"object"` // "response"
	CreatedAt          int64               `json:"created_at"`
	Status             string              `json:"status"` // in_progress, completed, incomplete, failed
	Error              *ResponseError      `json:"error"`
	IncompleteDetails  *IncompleteDetails  `json:"incomplete_details"`
	Instructions       *string             `json:"instructions"`
	MaxOutputTokens    int                 `json:"max_output_tokens"`
	MaxToolCalls       *int                `json:"max_tool_calls"`
	Metadata           map[string]string   `json:"metadata"`
	Model              string              `json:"model"`
	Output             []any               `json:"output"` // *MessageItem, *FunctionCallItem, *ReasoningItem
	ParallelToolCalls  bool                `json:"parallel_tool_calls"`
	PreviousResponseID *string             `json:"previous_response_id"`
	Reasoning          *ResponsesReasoning `json:"reasoning"`
	ServiceTier        string              `json:"service_tier"`
	Store              bool                `json:"store"`
	Temperature        float64             `json:"temperature"`
	Text               ResponsesText       `json:"text"`
	ToolChoice         any                 `json:"tool_choice"`
	Tools              []ResponseTool      `json:"tools"`
	TopLogprobs        int                 `json:"top_logprobs"`
	TopP               float64             `json:"top_p"`
	Truncation         string              `json:"truncation"`
	Background         bool                `json:"background"`
	Usage              *ResponseUsage      `json:"usage"`
	User               *string             `json:"user"`
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete.
type IncompleteDetails struct {
	Reason string `json:"reason"` // "max_output_tokens"
}

// ResponseTool is a function tool as the response echoes it (flat).
type ResponseTool struct {
	Type        string  `json:"type"` // "function"
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Parameters  any     `json:"parameters"`
	Strict      *bool   `json:"strict"`
}

// ResponseToolsEcho is the tools of t in the response's flat shape.
func ResponseToolsEcho(t *ChatTools) []ResponseTool {
	out := []ResponseTool{}
	if t == nil {
		return out
	}
	for _, ft := range t.Tools {
		rt := ResponseTool{Type: "function", Name: ft.Name, Description: ft.Description, Strict: ft.Strict}
		if ft.Parameters != nil {
			rt.Parameters = ft.Parameters
		}
		out = append(out, rt)
	}
	return out
}

// ToolChoiceEcho is the tool_choice as the response echoes it.
func ToolChoiceEcho(t *ChatTools) any {
	switch {
	case t == nil:
		return ToolChoiceAuto // vLLM's default
	case t.Choice.Mode == ToolChoiceFunction:
		return map[string]string{"type": "function", "name": t.Choice.Name}
	}
	return t.Choice.Mode
}

// MessageItem is an output message.
type MessageItem struct {
	Type    string       `json:"type"` // "message"
	ID      string       `json:"id"`
	Status  string       `json:"status"` // in_progress, completed, incomplete
	Role    string       `json:"role"`   // "assistant"
	Content []OutputText `json:"content"`
}

// OutputText is a message's output_text content part.
type OutputText struct {
	Type        string `json:"type"` // "output_text"
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

// NewOutputText is an output_text part with no annotations.
func NewOutputText(text string) OutputText {
	return OutputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

// FunctionCallItem is a function call the model made.
type FunctionCallItem struct {
	Type      string `json:"type"` // "function_call"
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

// ReasoningItem is the reasoning a --reasoning-parser split off.
type ReasoningItem struct {
	Type    string          `json:"type"` // "reasoning"
	ID      string          `json:"id"`
	Summary []any           `json:"summary"`
	Content []ReasoningText `json:"content"`
	Status  string          `json:"status"`
}

// ReasoningText is a reasoning item's content part.
type ReasoningText struct {
	Type string `json:"type"` // "reasoning_text"
	Text string `json:"text"`
}

// ResponseUsage is the token usage of a response.
type ResponseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

// InputTokensDetails counts the prompt tokens served from the prefix cache.
type InputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputTokensDetails counts the output tokens spent on reasoning.
type OutputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// NewResponseUsage fills TotalTokens.
func NewResponseUsage(input, output, cached, reasoning int) *ResponseUsage {
	return &ResponseUsage{InputTokens: input, OutputTokens: output, TotalTokens: input + output,
		InputTokensDetails: InputTokensDetails{CachedTokens: cached}, OutputTokensDetails: OutputTokensDetails{ReasoningTokens: reasoning}}
}

// ResponseEvent is one streamed event; Type decides which fields are set
// (OpenAI's response.* event shapes).
type ResponseEvent struct {
	Type           string    `json:"type"`
	SequenceNumber int       `json:"sequence_number"`
	Response       *Response `json:"response,omitempty"`
	OutputIndex    *int      `json:"output_index,omitempty"`
	ContentIndex   *int      `json:"content_index,omitempty"`
	ItemID         string    `json:"item_id,omitempty"`
	Item           any       `json:"item,omitempty"`
	Part           any       `json:"part,omitempty"`
	Delta          *string   `json:"delta,omitempty"`
	Text           *string   `json:"text,omitempty"`
	Arguments      *string   `json:"arguments,omitempty"`
	Name           string    `json:"name,omitempty"`
	Logprobs       *[]any    `json:"logprobs,omitempty"`
	// The "error" event's.
	Code    *string `json:"code,omitempty"`
	Message string  `json:"message,omitempty"`
	Param   *string `json:"param,omitempty"`
}
