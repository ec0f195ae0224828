package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
	"govllm/internal/openai"
	"govllm/internal/reasoning"
	"govllm/internal/sampling"
	"govllm/internal/toolparser"
)

// chatOutput is how a chat request's output text becomes the assistant
// message: the reasoning the server's --reasoning-parser splits off, then
// tool calls as tool_choice says. A nil *chatOutput is plain content.
type chatOutput struct {
	reasoning *reasoning.Parser
	mode      string             // "" (content), openai.ToolChoiceAuto, Required or Function
	name      string             // the named function
	parser    *toolparser.Parser // auto: the server's --tool-call-parser
}

// planChatOutput decides a chat request's output handling. "auto" needs
// --enable-auto-tool-choice and --tool-call-parser (vLLM's message
// otherwise); "required" and a named function are enforced with a JSON
// Schema constraint (vLLM's), so they cannot be combined with another
// structured-output constraint. Parsers that match special tokens get
// them kept in the text (vLLM's adjust_request).
func (s *Server) planChatOutput(t *openai.ChatTools, kwargs *jsonvalue.Object, p *sampling.Params) (*chatOutput, error) {
	co := &chatOutput{}
	if name := s.cfg.ReasoningParser; name != "" {
		rp, err := reasoning.New(name, reasoning.Options{DisableThinking: thinkingOff(kwargs)})
		if err != nil {
			return nil, err
		}
		co.reasoning = rp
		s.keepSpecial(p, rp.Markers())
	}
	if t != nil && t.Choice.Mode != openai.ToolChoiceNone {
		co.mode, co.name = t.Choice.Mode, t.Choice.Name
		switch co.mode {
		case openai.ToolChoiceAuto:
			if !s.cfg.EnableAutoToolChoice || s.cfg.ToolCallParser == "" {
				return nil, apierr.New("tool_choice", `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`)
			}
			if err := refuseStrict(t); err != nil {
				return nil, err
			}
			tp, err := toolparser.New(s.cfg.ToolCallParser, parserTools(t), toolparser.Options{})
			if err != nil {
				return nil, err
			}
			co.parser = tp
			s.keepSpecial(p, tp.Markers())
		default:
			if p.Structured != nil {
				return nil, apierr.New("tool_choice", "tool_choice %q is enforced with a structured-output constraint and cannot be combined with %s", co.mode, p.Structured.Param)
			}
			schema, err := toolSchema(t)
			if err != nil {
				return nil, err
			}
			// Compact: the arguments are re-serialized anyway (required) or
			// are JSON either way (named); whitespace would only cost tokens.
			p.Structured = &sampling.Structured{JSONSchema: schema, Compact: true, Param: "tool_choice"}
		}
	}
	if co.reasoning == nil && co.mode == "" {
		return nil, nil
	}
	return co, nil
}

// checkParsers refuses unknown parser names, and auto tool choice
// without a parser (vLLM's start-up checks).
func checkParsers(cfg Config) error {
	if n := cfg.ToolCallParser; n != "" && !slices.Contains(toolparser.Names(), n) {
		return fmt.Errorf("httpapi: unknown tool call parser %q (known: %s)", n, strings.Join(toolparser.Names(), ", "))
	}
	if n := cfg.ReasoningParser; n != "" && !slices.Contains(reasoning.Names(), n) {
		return fmt.Errorf("httpapi: unknown reasoning parser %q (known: %s)", n, strings.Join(reasoning.Names(), ", "))
	}
	if cfg.EnableAutoToolChoice && cfg.ToolCallParser == "" {
		return errors.New("httpapi: --enable-auto-tool-choice requires --tool-call-parser")
	}
	return nil
}

// refuseStrict refuses a strict tool under tool_choice "auto": its
// arguments are parsed from free text, not constrained to the schema, so
// strict could not be honoured ("required" and a named function are).
func refuseStrict(t *openai.ChatTools) error {
	for i, ft := range t.Tools {
		if ft.Strict != nil && *ft.Strict {
			return apierr.New(fmt.Sprintf("tools[%d].function.strict", i),
				"strict is enforced only with tool_choice \"required\" or a named function; with \"auto\" the calls are parsed from the output, not constrained (send strict false or leave it out)")
		}
	}
	return nil
}

// thinkingOff reports chat_template_kwargs enable_thinking: false.
func thinkingOff(kw *jsonvalue.Object) bool {
	if kw == nil {
		return false
	}
	v, ok := kw.Get("enable_thinking")
	return ok && v == false
}

// keepSpecial detokenizes with special tokens when a parser matches a
// text that is one of the model's special tokens.
func (s *Server) keepSpecial(p *sampling.Params, markers []string) {
	for _, m := range markers {
		if id, ok := s.tok.TokenID(m); ok && s.tok.IsSpecial(id) {
			p.KeepSpecialTokens = true
			return
		}
	}
}

// parserTools converts the request's tools for the tool-call parser.
func parserTools(t *openai.ChatTools) []toolparser.Tool {
	out := make([]toolparser.Tool, len(t.Tools))
	for i, ft := range t.Tools {
		out[i].Name = ft.Name
		if ft.Parameters != nil {
			out[i].Parameters, _ = json.Marshal(ft.Parameters)
		}
	}
	return out
}

// toolSchema is vLLM's JSON Schema for tool_choice "required" (an array of
// at least one {"name", "parameters"} object, anyOf the tools, the tools'
// $defs at the root; at most one call when parallel_tool_calls is false;
// unlike vLLM's, a call object has no other members, which a model with
// weak tool training would otherwise fill until max_tokens)
// or for a named function (its parameters).
func toolSchema(t *openai.ChatTools) (string, error) {
	params := func(ft openai.FunctionTool) string {
		if ft.Parameters == nil {
			return `{"type":"object","properties":{}}`
		}
		b, _ := json.Marshal(ft.Parameters)
		return string(b)
	}
	if t.Choice.Mode == openai.ToolChoiceFunction {
		for _, ft := range t.Tools {
			if ft.Name == t.Choice.Name {
				return params(ft), nil
			}
		}
		return "", apierr.New("tool_choice.function.name", "%q is not one of the tools", t.Choice.Name)
	}
	items := make([]string, len(t.Tools))
	defs := jsonvalue.NewObject()
	for i, ft := range t.Tools {
		name, _ := json.Marshal(ft.Name)
		items[i] = `{"properties":{"name":{"type":"string","enum":[` + string(name) + `]},"parameters":` + params(ft) + `},"required":["name","parameters"],"additionalProperties":false}`
		if err := mergeDefs(defs, ft, i); err != nil {
			return "", err
		}
	}
	maxItems := ""
	if !t.Parallel {
		maxItems = `,"maxItems":1`
	}
	schema := `{"type":"array","minItems":1` + maxItems + `,"items":{"type":"object","anyOf":[` + strings.Join(items, ",") + `]}`
	if defs.Len() > 0 {
		b, _ := json.Marshal(defs)
		schema += `,"$defs":` + string(b)
	}
	return schema + "}", nil
}

// mergeDefs adds tool i's parameter $defs to defs (vLLM's
// get_tool_schema_defs): the same name with another definition is a 400.
func mergeDefs(defs *jsonvalue.Object, ft openai.FunctionTool, i int) error {
	if ft.Parameters == nil {
		return nil
	}
	d, ok := ft.Parameters.Get("$defs")
	if !ok {
		return nil
	}
	obj, ok := d.(*jsonvalue.Object)
	if !ok {
		return apierr.New(fmt.Sprintf("tools[%d].function.parameters.$defs", i), "must be an object")
	}
	for _, k := range obj.Keys() {
		v, _ := obj.Get(k)
		if old, dup := defs.Get(k); dup {
			a, _ := json.Marshal(old)
			b, _ := json.Marshal(v)
			if string(a) != string(b) {
				return apierr.New(fmt.Sprintf("tools[%d].function.parameters.$defs", i), "$defs %q differs from another tool's definition of it", k)
			}
			continue
		}
		defs.Set(k, v)
	}
	return nil
}
