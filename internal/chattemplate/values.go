package chattemplate

import (
	"encoding/json"
	"sort"

	"govllm/internal/jinja"

	"govllm/internal/jsonvalue"
)

// messagesValue builds the template's messages list the way vLLM's
// parse_chat_messages hands it to transformers: {"role", "content"}, then
// "tool_calls" for an assistant message with calls, "tool_call_id" for a
// tool message, and "name" when given. content is a string, or with the
// "openai" format a list of text parts (a tool message's stays a string).
func messagesValue(msgs []Message, openai bool) jinja.Value {
	items := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		dict := d.AsDict()
		dict.Set("role", jinja.NewString(m.Role))
		if openai && m.Role != "tool" {
			dict.Set("content", partsValue(m))
		} else {
			dict.Set("content", jinja.NewString(m.Content))
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			dict.Set("tool_calls", toolCallsValue(m.ToolCalls))
		}
		if m.Role == "assistant" && m.Reasoning != "" {
			dict.Set("reasoning_content", jinja.NewString(m.Reasoning))
			dict.Set("reasoning", jinja.NewString(m.Reasoning))
		}
		if m.Role == "tool" && m.ToolCallID != "" {
			dict.Set("tool_call_id", jinja.NewString(m.ToolCallID))
		}
		if m.Name != "" {
			dict.Set("name", jinja.NewString(m.Name))
		}
		items[i] = d
	}
	return jinja.NewList(items)
}

// partsValue is the content as [{"type": "text", "text": ...}, ...].
func partsValue(m Message) jinja.Value {
	parts := m.Parts
	if parts == nil {
		parts = []string{m.Content}
	}
	items := make([]jinja.Value, len(parts))
	for i, p := range parts {
		d := jinja.NewDict()
		d.AsDict().Set("type", jinja.NewString("text"))
		d.AsDict().Set("text", jinja.NewString(p))
		items[i] = d
	}
	return jinja.NewList(items)
}

// toolCallsValue gives each call as the OpenAI message param
// {"id", "function": {"arguments", "name"}, "type": "function"} (the
// field order of openai-python's TypedDicts, which pydantic keeps), with
// arguments parsed from JSON text into an object.
func toolCallsValue(calls []ToolCall) jinja.Value {
	items := make([]jinja.Value, len(calls))
	for i, c := range calls {
		fn := jinja.NewDict()
		fn.AsDict().Set("arguments", argumentsValue(c.Arguments))
		fn.AsDict().Set("name", jinja.NewString(c.Name))
		d := jinja.NewDict()
		d.AsDict().Set("id", jinja.NewString(c.ID))
		d.AsDict().Set("function", fn)
		d.AsDict().Set("type", jinja.NewString("function"))
		items[i] = d
	}
	return jinja.NewList(items)
}

// argumentsValue is vLLM's rule: JSON text that parses becomes the parsed
// value; anything else becomes an empty object.
func argumentsValue(args string) jinja.Value {
	v, err := jsonvalue.Parse([]byte(args))
	if err != nil {
		return jinja.NewDict()
	}
	return toValue(v)
}

// toolsValue is vLLM's [tool.model_dump() for tool in request.tools]:
// {"type": "function", "function": {"name", "description", "parameters"}}
// with null for an absent description or parameters, and "strict" after
// them only when the client sent it (pydantic keeps extra fields).
func toolsValue(tools []Tool) jinja.Value {
	items := make([]jinja.Value, len(tools))
	for i, t := range tools {
		fn := jinja.NewDict()
		f := fn.AsDict()
		f.Set("name", jinja.NewString(t.Name))
		if t.Description != nil {
			f.Set("description", jinja.NewString(*t.Description))
		} else {
			f.Set("description", jinja.None())
		}
		f.Set("parameters", toValue(t.Parameters))
		if t.Strict != nil {
			f.Set("strict", jinja.NewBool(*t.Strict))
		}
		d := jinja.NewDict()
		d.AsDict().Set("type", jinja.NewString("function"))
		d.AsDict().Set("function", fn)
		items[i] = d
	}
	return jinja.NewList(items)
}

// toValue converts decoded JSON (with *jsonvalue.Object keeping key order)
// or plain Go values into a template value. Plain maps, which have no
// order, iterate in sorted key order.
func toValue(v any) jinja.Value {
	switch x := v.(type) {
	case *jsonvalue.Object:
		d := jinja.NewDict()
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			d.AsDict().Set(k, toValue(e))
		}
		return d
	case []any:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			items[i] = toValue(e)
		}
		return jinja.NewList(items)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := jinja.NewDict()
		for _, k := range keys {
			d.AsDict().Set(k, toValue(x[k]))
		}
		return d
	case json.Number:
		return jinja.FromGoValue(x)
	}
	return jinja.FromGoValue(v)
}
