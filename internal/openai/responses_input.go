package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"govllm/internal/apierr"
)

// ResponsesInput is a Responses API "input" as chat messages (vLLM's
// construct_chat_messages_with_tool_call): a string is one user message;
// a list holds message items (role and content, a string or input_text /
// output_text parts), function_call items (merged into the preceding
// assistant message's tool_calls, or an assistant message of their own)
// and function_call_output items (tool messages). Continue is set when the
// last item is an assistant message with status "in_progress" or
// "incomplete": the model continues it (vLLM's
// should_continue_final_message).
type ResponsesInput struct {
	Messages []ChatMessage
	Continue bool
}

// inputItem is one input list entry, every field any supported item type
// has (type decides which are allowed).
type inputItem struct {
	Type      *string         `json:"type"`
	ID        *string         `json:"id"` // accepted, not used
	Status    *string         `json:"status"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    *string         `json:"call_id"`
	Name      *string         `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// ParseResponsesInput converts input; errors name input[i]....
func ParseResponsesInput(raw json.RawMessage) (ResponsesInput, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ResponsesInput{Messages: []ChatMessage{{Role: "user", Content: ChatContent(s)}}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return ResponsesInput{}, apierr.New("input", "must be a string or an array of input items")
	}
	if len(items) == 0 {
		return ResponsesInput{}, apierr.New("input", "must not be empty")
	}
	var in ResponsesInput
	for i, b := range items {
		at := fmt.Sprintf("input[%d]", i)
		var it inputItem
		if err := checkItemType(b, at); err != nil {
			return in, err
		}
		if err := strictUnmarshal(b, &it); err != nil {
			return in, apierr.New(at, "an input item must be a message, function_call or function_call_output object: %v", err)
		}
		cont, err := in.add(it, at)
		if err != nil {
			return in, err
		}
		in.Continue = cont && i == len(items)-1
	}
	return in, nil
}

// add appends item it; it reports whether it is a partial assistant
// message.
func (in *ResponsesInput) add(it inputItem, at string) (bool, error) {
	typ := "message"
	if it.Type != nil {
		typ = *it.Type
	}
	switch typ {
	case "function_call":
		return false, in.addCall(it, at)
	case "function_call_output":
		return false, in.addOutput(it, at)
	}
	return in.addMessage(it, at)
}

// checkItemType refuses an item type other than message, function_call
// and function_call_output (reasoning items, item references, built-in
// tools' calls) before its fields are checked.
func checkItemType(b json.RawMessage, at string) error {
	var t struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return apierr.New(at, "an input item must be an object")
	}
	if t.Type == nil {
		return nil
	}
	switch *t.Type {
	case "message", "function_call", "function_call_output":
		return nil
	}
	return apierr.New(at+".type", "input item type %q is not supported (message, function_call, function_call_output)", *t.Type)
}

// only refuses the fields of it that its type does not have.
func only(it inputItem, at string, allowed ...string) error {
	set := map[string]bool{"role": it.Role != nil, "content": it.Content != nil, "call_id": it.CallID != nil,
		"name": it.Name != nil, "arguments": it.Arguments != nil, "output": it.Output != nil}
	for _, a := range allowed {
		delete(set, a)
	}
	for _, k := range []string{"role", "content", "call_id", "name", "arguments", "output"} {
		if set[k] {
			return apierr.New(at+"."+k, "is not a field of this input item type")
		}
	}
	return nil
}

var inputRoles = map[string]bool{"user": true, "system": true, "developer": true, "assistant": true}

func (in *ResponsesInput) addMessage(it inputItem, at string) (bool, error) {
	if err := only(it, at, "role", "content"); err != nil {
		return false, err
	}
	if it.Role == nil || !inputRoles[*it.Role] {
		return false, apierr.New(at+".role", "must be one of user, system, developer, assistant")
	}
	if it.Content == nil {
		return false, apierr.New(at+".content", "is required")
	}
	text, parts, err := inputContent(it.Content, at+".content")
	if err != nil {
		return false, err
	}
	m := ChatMessage{Role: *it.Role, Content: ChatContent(text), Parts: parts}
	if prev := in.lastAssistant(); *it.Role == "assistant" && prev != nil && prev.Content == "" && len(prev.Parts) == 0 && len(prev.ToolCalls) > 0 {
		prev.Content, prev.Parts = m.Content, m.Parts // vLLM fills the calls' message's content
	} else {
		in.Messages = append(in.Messages, m)
	}
	partial := it.Status != nil && (*it.Status == "in_progress" || *it.Status == "incomplete")
	return *it.Role == "assistant" && partial, nil
}

// inputContent is a message item's content: a string, or input_text /
// output_text parts (joined with "\n", and the parts).
func inputContent(raw json.RawMessage, at string) (string, []string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, apierr.New(at, "must be a string or an array of input_text parts")
	}
	texts := make([]string, len(parts))
	for j, p := range parts {
		var part struct {
			Type        *string         `json:"type"`
			Text        *string         `json:"text"`
			Annotations json.RawMessage `json:"annotations"`
			Logprobs    json.RawMessage `json:"logprobs"`
		}
		pat := fmt.Sprintf("%s[%d]", at, j)
		json.Unmarshal(p, &part) // the type first: an image part is refused as one
		if part.Type == nil || (*part.Type != "input_text" && *part.Type != "output_text") {
			return "", nil, apierr.New(pat+".type", "only input_text and output_text parts are supported")
		}
		if err := strictUnmarshal(p, &part); err != nil {
			return "", nil, apierr.New(pat, "a text part must be {\"type\": \"input_text\", \"text\": string}: %v", err)
		}
		if part.Text == nil {
			return "", nil, apierr.New(pat+".text", "is required")
		}
		texts[j] = *part.Text
	}
	return strings.Join(texts, "\n"), texts, nil
}

// lastAssistant is the last message when it is the assistant's.
func (in *ResponsesInput) lastAssistant() *ChatMessage {
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "assistant" {
		return &in.Messages[n-1]
	}
	return nil
}

func (in *ResponsesInput) addCall(it inputItem, at string) error {
	if err := only(it, at, "call_id", "name", "arguments"); err != nil {
		return err
	}
	switch {
	case it.CallID == nil || *it.CallID == "":
		return apierr.New(at+".call_id", "is required")
	case it.Name == nil || *it.Name == "":
		return apierr.New(at+".name", "is required")
	case it.Arguments == nil:
		return apierr.New(at+".arguments", "is required")
	}
	call := MessageToolCall{ID: *it.CallID, Type: "function", Function: FunctionCall{Name: *it.Name, Arguments: *it.Arguments}}
	if prev := in.lastAssistant(); prev != nil {
		prev.ToolCalls = append(prev.ToolCalls, call)
		return nil
	}
	in.Messages = append(in.Messages, ChatMessage{Role: "assistant", Parts: []string{}, ToolCalls: []MessageToolCall{call}})
	return nil
}

func (in *ResponsesInput) addOutput(it inputItem, at string) error {
	if err := only(it, at, "call_id", "output"); err != nil {
		return err
	}
	if it.CallID == nil || *it.CallID == "" {
		return apierr.New(at+".call_id", "is required")
	}
	if it.Output == nil {
		return apierr.New(at+".output", "is required")
	}
	text, parts, err := inputContent(it.Output, at+".output")
	if err != nil {
		return err
	}
	in.Messages = append(in.Messages, ChatMessage{Role: "tool", Content: ChatContent(text), Parts: parts, ToolCallID: *it.CallID})
	return nil
}
