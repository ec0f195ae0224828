package openai

import (
	"encoding/json"
	"fmt"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
)

// FunctionTool is one validated "tools" entry: {"type": "function",
// "function": {"name", "description", "parameters", "strict"}}.
type FunctionTool struct {
	Name        string
	Description *string
	// Parameters is the JSON-Schema object in the client's key order, or
	// nil when the tool has none.
	Parameters *jsonvalue.Object
	Strict     *bool
}

// Tool choice modes (ToolChoice.Mode).
const (
	ToolChoiceNone     = "none"
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceFunction = "function" // a named function: ToolChoice.Name
)

// ToolChoice is the parsed tool_choice.
type ToolChoice struct {
	Mode string
	Name string // the function, for ToolChoiceFunction
}

// ChatTools is what a chat request asks about tools, parsed and validated
// (ParseTools). It is what the tool-call output parsers need: the tools
// offered (also rendered into the prompt), the choice, and whether
// several calls may come in one answer.
type ChatTools struct {
	Tools    []FunctionTool
	Choice   ToolChoice
	Parallel bool // parallel_tool_calls, default true
}

// ParseTools validates tools, tool_choice and parallel_tool_calls. It
// returns nil when the request has no tools field, and ChatTools with no
// tools for "tools": [] (then tool_choice may only be absent or "none"). tool_choice defaults to "auto" when tools are given,
// as in OpenAI's API and vLLM.
func ParseTools(tools []json.RawMessage, choice json.RawMessage, parallel *bool) (*ChatTools, error) {
	c, err := parseToolChoice(choice, len(tools) > 0)
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		if c.Mode != ToolChoiceNone {
			return nil, apierr.New("tool_choice", "tool_choice %q requires tools", c.Mode)
		}
		if tools != nil {
			// "tools": [] reaches the template as an empty list, as in vLLM.
			return &ChatTools{Choice: c, Parallel: parallel == nil || *parallel, Tools: []FunctionTool{}}, nil
		}
		return nil, nil
	}
	ct := &ChatTools{Choice: c, Parallel: parallel == nil || *parallel, Tools: make([]FunctionTool, len(tools))}
	for i, raw := range tools {
		if ct.Tools[i], err = parseTool(raw, fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, err
		}
	}
	if c.Mode == ToolChoiceFunction && !ct.has(c.Name) {
		return nil, apierr.New("tool_choice.function.name", "%q is not one of the tools", c.Name)
	}
	return ct, nil
}

func (ct *ChatTools) has(name string) bool {
	for _, t := range ct.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// parseToolChoice reads "none", "auto", "required" or {"type":
// "function", "function": {"name": ...}}; absent or null is "auto" with
// tools and "none" without.
func parseToolChoice(raw json.RawMessage, haveTools bool) (ToolChoice, error) {
	if len(raw) == 0 || isNull(raw) {
		if haveTools {
			return ToolChoice{Mode: ToolChoiceAuto}, nil
		}
		return ToolChoice{Mode: ToolChoiceNone}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return ToolChoice{Mode: s}, nil
		}
		return ToolChoice{}, apierr.New("tool_choice", "must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}, got %q", s)
	}
	var named struct {
		Type     *string `json:"type"`
		Function *struct {
			Name *string `json:"name"`
		} `json:"function"`
	}
	if err := strictUnmarshal(raw, &named); err != nil {
		return ToolChoice{}, apierr.New("tool_choice", "must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}: %v", err)
	}
	switch {
	case named.Type == nil || *named.Type != "function":
		return ToolChoice{}, apierr.New("tool_choice.type", "must be \"function\"")
	case named.Function == nil || named.Function.Name == nil || *named.Function.Name == "":
		return ToolChoice{}, apierr.New("tool_choice.function.name", "is required")
	}
	return ToolChoice{Mode: ToolChoiceFunction, Name: *named.Function.Name}, nil
}

// parseTool validates one tools entry; at is its parameter path.
func parseTool(raw json.RawMessage, at string) (FunctionTool, error) {
	var t struct {
		Type     *string `json:"type"`
		Function *struct {
			Name        *string         `json:"name"`
			Description *string         `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	if err := strictUnmarshal(raw, &t); err != nil {
		return FunctionTool{}, apierr.New(at, "a tool must be {\"type\": \"function\", \"function\": {\"name\", \"description\", \"parameters\", \"strict\"}}: %v", err)
	}
	switch {
	case t.Type == nil || *t.Type != "function":
		return FunctionTool{}, apierr.New(at+".type", "only \"function\" tools are supported")
	case t.Function == nil:
		return FunctionTool{}, apierr.New(at+".function", "is required")
	case t.Function.Name == nil || *t.Function.Name == "":
		return FunctionTool{}, apierr.New(at+".function.name", "is required")
	}
	ft := FunctionTool{Name: *t.Function.Name, Description: t.Function.Description, Strict: t.Function.Strict}
	if len(t.Function.Parameters) > 0 && !isNull(t.Function.Parameters) {
		p, err := parseParameters(t.Function.Parameters, at+".function.parameters")
		if err != nil {
			return FunctionTool{}, err
		}
		ft.Parameters = p
	}
	return ft, nil
}

// parseParameters checks the shape of a tool's JSON Schema: an object
// whose "type", when given, is "object", whose "properties", when given,
// map names to schemas (objects or booleans), and whose "required", when
// given, is an array of strings.
func parseParameters(raw json.RawMessage, at string) (*jsonvalue.Object, error) {
	v, err := jsonvalue.Parse(raw)
	obj, ok := v.(*jsonvalue.Object)
	if err != nil || !ok {
		return nil, apierr.New(at, "must be a JSON Schema object")
	}
	if typ, ok := obj.Get("type"); ok && typ != "object" {
		return nil, apierr.New(at+".type", "must be \"object\" (the arguments are a JSON object)")
	}
	if props, ok := obj.Get("properties"); ok {
		po, ok := props.(*jsonvalue.Object)
		if !ok {
			return nil, apierr.New(at+".properties", "must be an object mapping names to schemas")
		}
		for _, k := range po.Keys() {
			s, _ := po.Get(k)
			if _, isObj := s.(*jsonvalue.Object); !isObj && s != true && s != false {
				return nil, apierr.New(at+".properties."+k, "must be a schema (an object or a boolean)")
			}
		}
	}
	if req, ok := obj.Get("required"); ok {
		list, ok := req.([]any)
		for _, r := range list {
			if _, isStr := r.(string); !isStr {
				ok = false
			}
		}
		if !ok {
			return nil, apierr.New(at+".required", "must be an array of property names")
		}
	}
	return obj, nil
}
