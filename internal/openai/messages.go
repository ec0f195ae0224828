package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"govllm/internal/apierr"
	"govllm/internal/jsonvalue"
)

// ChatMessage is one message of a conversation. Content may be a string,
// null, or an array of {"type": "text", "text": ...} parts (joined with
// "\n", as vLLM does for string-content templates). An assistant message
// may carry tool_calls; a tool message carries tool_call_id (required) and
// may carry name.
//
// Decoding never fails on a message's own fields: the first problem is kept
// and CheckMessages reports it with the message's index
// ("messages[2].content[0].type"), so every caller must run CheckMessages.
type ChatMessage struct {
	Role       string            `json:"role"`
	Content    ChatContent       `json:"content"`
	Name       string            `json:"name,omitempty"`
	ToolCalls  []MessageToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
	// Reasoning is an assistant message's reasoning_content (or
	// reasoning, its newer name), for templates that render it back.
	Reasoning string `json:"reasoning_content,omitempty"`
	// Parts are the text parts as sent (nil for a string content, empty for
	// null), for templates that take content as a list of parts.
	Parts []string      `json:"-"`
	bad   *apierr.Error // Param relative to the message
}

// ChatContent is the text of a message.
type ChatContent string

// MessageToolCall is one call in an assistant message's history.
type MessageToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a call's function name and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// UnmarshalJSON decodes a message, keeping the first problem for
// CheckMessages (see ChatMessage).
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return apierr.New("messages", "each message must be a JSON object")
	}
	*m = ChatMessage{}
	if _, ok := fields["content"]; !ok {
		m.Parts = []string{} // absent is null: no parts (vLLM)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if err := m.decodeField(k, fields[k]); err != nil {
			m.bad = err
			return nil
		}
	}
	return nil
}

func (m *ChatMessage) decodeField(k string, raw json.RawMessage) *apierr.Error {
	switch k {
	case "role":
		return decodeString(k, raw, &m.Role)
	case "name":
		return decodeString(k, raw, &m.Name)
	case "tool_call_id":
		return decodeString(k, raw, &m.ToolCallID)
	case "reasoning_content", "reasoning":
		if m.Reasoning != "" && !isNull(raw) {
			return apierr.New(k, "give reasoning_content or reasoning, not both")
		}
		return decodeString(k, raw, &m.Reasoning)
	case "content":
		text, parts, err := decodeContent(raw)
		m.Content, m.Parts = ChatContent(text), parts
		return err
	case "tool_calls":
		calls, err := decodeToolCalls(raw)
		m.ToolCalls = calls
		return err
	}
	if isNull(raw) {
		return nil // null asks for nothing (SDKs echo "refusal": null etc.)
	}
	return apierr.New(k, "message field %q is not supported", k)
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// decodeString decodes a string or null into *dst.
func decodeString(param string, raw json.RawMessage, dst *string) *apierr.Error {
	if isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return apierr.New(param, "must be a string")
	}
	return nil
}

// decodeContent is a content string, null ("", no parts) or text parts
// (joined with "\n", and the parts).
func decodeContent(raw json.RawMessage) (string, []string, *apierr.Error) {
	if isNull(raw) {
		return "", []string{}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, apierr.New("content", "must be a string, null or an array of text parts")
	}
	texts := make([]string, len(parts))
	for j, p := range parts {
		var part struct {
			Type *string `json:"type"`
			Text *string `json:"text"`
		}
		param := fmt.Sprintf("content[%d]", j)
		if err := json.Unmarshal(p, &part); err != nil {
			return "", nil, apierr.New(param, "a content part must be {\"type\": \"text\", \"text\": string}: %v", err)
		}
		switch {
		case part.Type == nil:
			return "", nil, apierr.New(param+".type", "is required")
		case *part.Type != "text":
			return "", nil, apierr.New(param+".type", "content part type %q is not supported (only \"text\")", *part.Type)
		case part.Text == nil:
			return "", nil, apierr.New(param+".text", "is required for a text part")
		}
		if err := strictUnmarshal(p, &part); err != nil {
			return "", nil, apierr.New(param, "a text part has only type and text: %v", err)
		}
		texts[j] = *part.Text
	}
	return strings.Join(texts, "\n"), texts, nil
}

// decodeToolCalls decodes an assistant message's tool_calls (null: none).
// A call's arguments may be JSON text (OpenAI) or a JSON object (vLLM
// accepts both); an object is kept as its JSON text.
func decodeToolCalls(raw json.RawMessage) ([]MessageToolCall, *apierr.Error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, apierr.New("tool_calls", "must be an array of tool calls")
	}
	calls := make([]MessageToolCall, len(list))
	for j, item := range list {
		param := fmt.Sprintf("tool_calls[%d]", j)
		var c struct {
			ID       *string `json:"id"`
			Type     *string `json:"type"`
			Function *struct {
				Name      *string         `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		if err := strictUnmarshal(item, &c); err != nil {
			return nil, apierr.New(param, "a tool call must be {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}: %v", err)
		}
		switch {
		case c.ID == nil:
			return nil, apierr.New(param+".id", "is required")
		case c.Type == nil || *c.Type != "function":
			return nil, apierr.New(param+".type", "must be \"function\"")
		case c.Function == nil:
			return nil, apierr.New(param+".function", "is required")
		case c.Function.Name == nil || *c.Function.Name == "":
			return nil, apierr.New(param+".function.name", "is required")
		}
		args, err := argumentsText(c.Function.Arguments)
		if err != nil {
			return nil, apierr.New(param+".function.arguments", "%s", err.Error())
		}
		calls[j] = MessageToolCall{ID: *c.ID, Type: "function", Function: FunctionCall{Name: *c.Function.Name, Arguments: args}}
	}
	return calls, nil
}

// argumentsText is a call's arguments as JSON text: a string as is, an
// object as its JSON.
func argumentsText(raw json.RawMessage) (string, error) {
	trimmed := strings.TrimSpace(string(raw))
	switch {
	case trimmed == "" || trimmed == "null":
		return "", fmt.Errorf("is required")
	case trimmed[0] == '{':
		return trimmed, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("must be a string of JSON or a JSON object")
	}
	return s, nil
}

// strictUnmarshal decodes an object refusing unknown fields.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// CheckMessages validates a conversation: at least one message, known
// roles, tool_calls only on assistant messages, tool_call_id on (and only
// on) tool messages, and any problem found while decoding. Errors name the
// field as messages[i]....
func CheckMessages(msgs []ChatMessage) error {
	if len(msgs) == 0 {
		return apierr.New("messages", "must contain at least one message")
	}
	for i, m := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		switch {
		case m.bad != nil:
			return apierr.New(at+"."+m.bad.Param, "%s", m.bad.Msg)
		case !chatRoles[m.Role]:
			return apierr.New(at+".role", "%q is not one of system, developer, user, assistant, tool", m.Role)
		case len(m.ToolCalls) > 0 && m.Role != "assistant":
			return apierr.New(at+".tool_calls", "only assistant messages may have tool_calls (role is %q)", m.Role)
		case m.Reasoning != "" && m.Role != "assistant":
			return apierr.New(at+".reasoning_content", "only assistant messages may have reasoning (role is %q)", m.Role)
		case m.Role == "tool" && m.ToolCallID == "":
			return apierr.New(at+".tool_call_id", "is required for a tool message")
		case m.Role != "tool" && m.ToolCallID != "":
			return apierr.New(at+".tool_call_id", "only tool messages may have tool_call_id (role is %q)", m.Role)
		}
	}
	return nil
}

// templateVariables are the chat template variables the server sets;
// chat_template_kwargs cannot replace them.
var templateVariables = []string{"messages", "tools", "add_generation_prompt", "bos_token", "eos_token", "raise_exception", "strftime_now"}

// CheckTemplateKwargs refuses chat_template_kwargs that would replace a
// variable the server sets (use the request field instead).
func CheckTemplateKwargs(kw *jsonvalue.Object) error {
	if kw == nil {
		return nil
	}
	for _, k := range templateVariables {
		if _, ok := kw.Get(k); ok {
			return apierr.New("chat_template_kwargs."+k, "%s is set by the server from the request; it cannot be a chat_template_kwargs entry", k)
		}
	}
	return nil
}
