package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
	"govllm/internal/sampling"
)

// ResponsesRequest is the body of POST /v1/responses: the fields of vLLM's
// ResponsesRequest (vllm/entrypoints/openai/responses/protocol.py). Every
// field is honoured or refused by Check with a 400 naming it.
type ResponsesRequest struct {
	Model              string              `json:"model"`
	Input              json.RawMessage     `json:"input"`
	Instructions       *string             `json:"instructions"`
	MaxOutputTokens    *int                `json:"max_output_tokens"`
	MaxToolCalls       *int                `json:"max_tool_calls"`
	Metadata           map[string]string   `json:"metadata"`
	LogitBias          map[string]float64  `json:"logit_bias"`
	ParallelToolCalls  *bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string             `json:"previous_response_id"`
	Reasoning          *ResponsesReasoning `json:"reasoning"`
	ServiceTier        *string             `json:"service_tier"`
	Store              *bool               `json:"store"`
	Stream             bool                `json:"stream"`
	Temperature        *float64            `json:"temperature"`
	TopP               *float64            `json:"top_p"`
	TopK               *int                `json:"top_k"`
	Text               *ResponsesText      `json:"text"`
	ToolChoice         json.RawMessage     `json:"tool_choice"`
	Tools              []json.RawMessage   `json:"tools"`
	TopLogprobs        *int                `json:"top_logprobs"`
	Truncation         *string             `json:"truncation"`
	User               *string             `json:"user"`
	// vLLM's extras.
	SkipSpecialTokens      *bool              `json:"skip_special_tokens"`
	IncludeStopStrInOutput bool               `json:"include_stop_str_in_output"`
	RequestID              string             `json:"request_id"`
	Priority               int                `json:"priority"`
	ChatTemplateKwargs     *jsonvalue.Object  `json:"chat_template_kwargs"`
	StructuredOutputs      *StructuredOutputs `json:"structured_outputs"`
	RepetitionPenalty      *float64           `json:"repetition_penalty"`
	Seed                   *int64             `json:"seed"`
	Stop                   Stop               `json:"stop"`
	IgnoreEOS              bool               `json:"ignore_eos"`
	// Refused unless they ask for nothing (see check).
	Background             *bool           `json:"background"`
	Include                []string        `json:"include"`
	Prompt                 json.RawMessage `json:"prompt"`
	PromptCacheKey         *string         `json:"prompt_cache_key"`
	EnableResponseMessages bool            `json:"enable_response_messages"`
	PreviousInputMessages  json.RawMessage `json:"previous_input_messages"`
}

// ResponsesReasoning is "reasoning": {"effort", "summary",
// "generate_summary"}.
type ResponsesReasoning struct {
	Effort          *string `json:"effort,omitempty"`
	Summary         *string `json:"summary,omitempty"`
	GenerateSummary *string `json:"generate_summary,omitempty"`
}

// ResponsesText is "text": {"format": {...}, "verbosity"}.
type ResponsesText struct {
	Format    *ResponsesTextFormat `json:"format,omitempty"`
	Verbosity *string              `json:"verbosity,omitempty"`
}

// ResponsesTextFormat is text.format: {"type": "text"}, {"type":
// "json_object"} or {"type": "json_schema", "name", "schema",
// "description", "strict"} (flat, unlike chat's response_format).
type ResponsesTextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Description *string         `json:"description,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// MaxMetadataPairs is OpenAI's limit on metadata (16 pairs, keys of at
// most 64 characters, values of at most 512).
const MaxMetadataPairs = 16

// Check refuses the fields govllm does not implement (set to anything
// that asks for something) and malformed values.
func (r *ResponsesRequest) Check() error {
	switch {
	case len(r.Input) == 0 || isNull(r.Input):
		return apierr.New("input", "is required")
	case r.Background != nil && *r.Background:
		return apierr.New("background", "background responses are not supported")
	case len(r.Include) > 0:
		return apierr.New("include", "include is not supported (no output item has extra data to include)")
	case len(r.Prompt) > 0 && !isNull(r.Prompt):
		return apierr.New("prompt", "prompt template is not supported") // vLLM's message
	case r.PromptCacheKey != nil:
		return apierr.New("prompt_cache_key", "prompt_cache_key is not supported (prefix caching is automatic)")
	case r.EnableResponseMessages:
		return apierr.New("enable_response_messages", "enable_response_messages is not supported")
	case len(r.PreviousInputMessages) > 0 && !isNull(r.PreviousInputMessages):
		return apierr.New("previous_input_messages", "previous_input_messages (harmony messages) are not supported")
	case r.ServiceTier != nil && *r.ServiceTier != "auto" && *r.ServiceTier != "default":
		return apierr.New("service_tier", "only \"auto\" and \"default\" are supported, got %q", *r.ServiceTier)
	case r.Truncation != nil && *r.Truncation != "disabled":
		return apierr.New("truncation", "only \"disabled\" is supported, got %q", *r.Truncation)
	case r.TopLogprobs != nil && *r.TopLogprobs != 0:
		return apierr.New("top_logprobs", "output logprobs are not supported in the Responses API")
	case r.MaxToolCalls != nil && *r.MaxToolCalls < 1:
		return apierr.New("max_tool_calls", "must be at least 1, got %d", *r.MaxToolCalls)
	case r.MaxOutputTokens != nil && *r.MaxOutputTokens < 1:
		return apierr.New("max_output_tokens", "must be at least 1, got %d", *r.MaxOutputTokens)
	}
	if err := r.checkMetadata(); err != nil {
		return err
	}
	if err := r.checkReasoning(); err != nil {
		return err
	}
	return CheckTemplateKwargs(r.ChatTemplateKwargs)
}

func (r *ResponsesRequest) checkMetadata() error {
	if len(r.Metadata) > MaxMetadataPairs {
		return apierr.New("metadata", "at most %d pairs are allowed, got %d", MaxMetadataPairs, len(r.Metadata))
	}
	for k, v := range r.Metadata {
		if len(k) > 64 || len(v) > 512 {
			return apierr.New("metadata."+k, "keys are at most 64 characters and values at most 512")
		}
	}
	return nil
}

// reasoningEfforts are the accepted reasoning.effort values ("minimal"
// counts as "low", as in vLLM).
var reasoningEfforts = []string{"none", "minimal", "low", "medium", "high"}

func (r *ResponsesRequest) checkReasoning() error {
	rs := r.Reasoning
	switch {
	case rs == nil:
		return nil
	case rs.Summary != nil || rs.GenerateSummary != nil:
		return apierr.New("reasoning.summary", "reasoning summaries are not supported")
	case rs.Effort != nil && !slices.Contains(reasoningEfforts, *rs.Effort):
		return apierr.New("reasoning.effort", "must be one of none, minimal, low, medium, high, got %q", *rs.Effort)
	}
	return nil
}

// TemplateKwargs are chat_template_kwargs with what reasoning.effort asks
// for, as vLLM's build_chat_params sets them: "none" → enable_thinking
// false; "low" (and "minimal") → enable_thinking true and low_effort;
// "medium", "high" → enable_thinking true; and reasoning_effort itself.
// The request's own chat_template_kwargs win.
func (r *ResponsesRequest) TemplateKwargs() *jsonvalue.Object {
	if r.Reasoning == nil || r.Reasoning.Effort == nil {
		return r.ChatTemplateKwargs
	}
	effort := *r.Reasoning.Effort
	if effort == "minimal" {
		effort = "low"
	}
	kw := jsonvalue.NewObject()
	kw.Set("enable_thinking", effort != "none")
	if effort == "low" {
		kw.Set("low_effort", true)
	}
	kw.Set("reasoning_effort", effort)
	if r.ChatTemplateKwargs != nil {
		for _, k := range r.ChatTemplateKwargs.Keys() {
			v, _ := r.ChatTemplateKwargs.Get(k)
			kw.Set(k, v)
		}
	}
	return kw
}

// SamplingParams converts the request over the server defaults base.
// MaxTokens stays 0 without max_output_tokens (the engine fills it).
func (r *ResponsesRequest) SamplingParams(base sampling.Params) (sampling.Params, error) {
	f := SamplingFields{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, RepetitionPenalty: r.RepetitionPenalty,
		Seed: r.Seed, Stop: r.Stop, IgnoreEOS: r.IgnoreEOS, IncludeStopStrInOutput: r.IncludeStopStrInOutput,
		LogitBias: r.LogitBias, SkipSpecialTokens: r.SkipSpecialTokens}
	p, err := f.toParams(base, r.MaxOutputTokens, nil)
	if err != nil {
		return p, err
	}
	p.Structured, err = r.structured()
	return p, err
}

// structured is the constraint text.format or structured_outputs asks for
// (not both, as in vLLM). A json_schema format is compact (vLLM's
// disable_any_whitespace).
func (r *ResponsesRequest) structured() (*sampling.Structured, error) {
	if r.Text != nil && r.Text.Verbosity != nil {
		return nil, apierr.New("text.verbosity", "verbosity is not supported")
	}
	var format *ResponsesTextFormat
	if r.Text != nil {
		format = r.Text.Format
	}
	if format != nil && r.StructuredOutputs != nil {
		return nil, apierr.New("structured_outputs", "Cannot specify both structured_outputs and text.format")
	}
	if r.StructuredOutputs != nil {
		s, err := r.StructuredOutputs.structured()
		if s != nil {
			s.Compact = r.StructuredOutputs.DisableAnyWhitespace
		}
		return s, err
	}
	if format == nil {
		return nil, nil
	}
	const p = "text.format"
	switch format.Type {
	case "text":
		return nil, nil
	case "json_object":
		return &sampling.Structured{JSONObject: true, Param: p}, nil
	case "json_schema":
		if format.Name == "" {
			return nil, apierr.New(p+".name", "is required for a json_schema format")
		}
		if !isJSONObject(format.Schema) {
			return nil, apierr.New(p+".schema", "must be a JSON Schema object")
		}
		return &sampling.Structured{JSONSchema: string(format.Schema), Compact: true, Param: p}, nil
	}
	return nil, apierr.New(p+".type", "must be text, json_object or json_schema, got %q", format.Type)
}

// ParseResponsesTools validates the Responses API's tools (flat function
// tools {"type": "function", "name", "description", "parameters",
// "strict"}; chat's nested shape is accepted too, as vLLM normalizes it),
// tool_choice ("none", "auto", "required", {"type": "function", "name"})
// and parallel_tool_calls. No tools is nil; then tool_choice may only be
// "none" or "auto" (vLLM's default).
func ParseResponsesTools(tools []json.RawMessage, choice json.RawMessage, parallel *bool) (*ChatTools, error) {
	c, err := parseResponsesToolChoice(choice, len(tools) > 0)
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		if c.Mode != ToolChoiceNone && c.Mode != ToolChoiceAuto {
			return nil, apierr.New("tool_choice", "tool_choice %q requires tools", c.Mode)
		}
		return nil, nil
	}
	ct := &ChatTools{Choice: c, Parallel: parallel == nil || *parallel, Tools: make([]FunctionTool, len(tools))}
	for i, raw := range tools {
		if ct.Tools[i], err = parseResponsesTool(raw, fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, err
		}
	}
	if c.Mode == ToolChoiceFunction && !ct.has(c.Name) {
		return nil, apierr.New("tool_choice.name", "%q is not one of the tools", c.Name)
	}
	return ct, nil
}

// parseResponsesToolChoice reads the string forms as chat does, and
// {"type": "function", "name"} (or chat's {"type": "function",
// "function": {"name"}}).
func parseResponsesToolChoice(raw json.RawMessage, haveTools bool) (ToolChoice, error) {
	var named struct {
		Type     *string         `json:"type"`
		Name     *string         `json:"name"`
		Function json.RawMessage `json:"function"`
	}
	if len(raw) == 0 || raw[0] != '{' {
		return parseToolChoice(raw, haveTools)
	}
	if err := strictUnmarshal(raw, &named); err != nil {
		return ToolChoice{}, apierr.New("tool_choice", "must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": ...}: %v", err)
	}
	if len(named.Function) > 0 && named.Name == nil {
		return parseToolChoice(raw, haveTools)
	}
	switch {
	case named.Type == nil || *named.Type != "function":
		return ToolChoice{}, apierr.New("tool_choice.type", "only \"function\" tool choices are supported")
	case named.Name == nil || *named.Name == "":
		return ToolChoice{}, apierr.New("tool_choice.name", "is required")
	}
	return ToolChoice{Mode: ToolChoiceFunction, Name: *named.Name}, nil
}

// parseResponsesTool validates one flat function tool; at is its path.
func parseResponsesTool(raw json.RawMessage, at string) (FunctionTool, error) {
	var t struct {
		Type        *string         `json:"type"`
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
		Function    json.RawMessage `json:"function"`
	}
	if err := strictUnmarshal(raw, &t); err != nil {
		return FunctionTool{}, apierr.New(at, "a tool must be {\"type\": \"function\", \"name\", \"description\", \"parameters\", \"strict\"}: %v", err)
	}
	switch {
	case t.Type == nil || *t.Type != "function":
		return FunctionTool{}, apierr.New(at+".type", "only \"function\" tools are supported")
	case len(t.Function) > 0 && t.Name == nil:
		return parseTool(raw, at) // chat's nested shape
	case t.Name == nil || *t.Name == "":
		return FunctionTool{}, apierr.New(at+".name", "is required")
	}
	ft := FunctionTool{Name: *t.Name, Description: t.Description, Strict: t.Strict}
	if len(t.Parameters) > 0 && !isNull(t.Parameters) {
		p, err := parseParameters(t.Parameters, at+".parameters")
		if err != nil {
			return FunctionTool{}, err
		}
		ft.Parameters = p
	}
	return ft, nil
}
