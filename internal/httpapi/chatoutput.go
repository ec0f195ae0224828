package httpapi

import (
	"strings"

	"govllm/internal/openai"
	"govllm/internal/reasoning"
	"govllm/internal/toolparser"
)

const finishToolCalls = "tool_calls"

// message builds a finished choice's assistant message from its text, and
// its finish reason: "tool_calls" when the parser found calls (auto) or a
// required choice stopped normally, as vLLM reports it. A required
// choice's text that is not a complete call list (cut by max_tokens) stays
// content.
func (co *chatOutput) message(text string, finish *string) (openai.ResponseMessage, *string) {
	m := openai.ResponseMessage{Role: "assistant"}
	if co == nil {
		m.Content = &text
		return m, finish
	}
	if co.reasoning != nil {
		r := co.reasoning.Extract(text)
		text = r.Content
		if r.Reasoning != "" {
			m.ReasoningContent, m.Reasoning = &r.Reasoning, &r.Reasoning
		}
	}
	var calls []toolparser.ToolCall
	switch co.mode {
	case openai.ToolChoiceAuto:
		res := co.parser.Extract(text)
		calls = res.ToolCalls
		if len(calls) > 0 {
			text = res.Content
			finish = ptrTo(finishToolCalls)
		}
	case openai.ToolChoiceFunction:
		calls = []toolparser.ToolCall{{ID: toolparser.NewID(nil), Name: co.name, Arguments: text}}
		text = ""
	case openai.ToolChoiceRequired:
		if c, err := toolparser.ParseRequired(text, nil); err == nil {
			calls, text = c, ""
			if finish != nil && *finish == "stop" {
				finish = ptrTo(finishToolCalls)
			}
		}
	}
	for _, c := range calls {
		m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: c.ID, Type: "function", Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	if co.mode != openai.ToolChoiceAuto || len(calls) == 0 || text != "" {
		m.Content = &text // null only beside auto calls; vLLM sends "" beside required or named ones
	}
	return m, finish
}

func ptrTo[T any](v T) *T { return &v }

// chatStream shapes one streamed choice: each text delta becomes a
// ChatDelta of reasoning, content and tool-call pieces. A named function's
// arguments stream as they come; a required choice's calls come whole at
// the end (its JSON array is parsed once complete).
type chatStream struct {
	co    *chatOutput
	rs    *reasoning.Stream
	ts    *toolparser.Stream
	named bool // the named call's header was sent
	req   strings.Builder
	calls int
	rbuf  []reasoning.Delta
	tbuf  []toolparser.Delta
}

func (co *chatOutput) newStream() *chatStream {
	cs := &chatStream{co: co}
	if co == nil {
		return cs
	}
	if co.reasoning != nil {
		cs.rs = co.reasoning.NewStream()
	}
	if co.parser != nil {
		cs.ts = co.parser.NewStream()
	}
	return cs
}

// delta turns the choice's next text (final: its last) into a delta, and
// the finish reason as message does.
func (cs *chatStream) delta(text string, final bool, finish *string) (openai.ChatDelta, *string) {
	var d openai.ChatDelta
	if cs.co == nil {
		d.Content = &text
		return d, finish
	}
	content := text
	if cs.rs != nil {
		cs.rbuf = cs.rs.Feed(cs.rbuf[:0], text)
		if final {
			cs.rbuf = cs.rs.Finish(cs.rbuf)
		}
		var r, c strings.Builder
		for _, x := range cs.rbuf {
			r.WriteString(x.Reasoning)
			c.WriteString(x.Content)
		}
		if r.Len() > 0 {
			s := r.String()
			d.ReasoningContent, d.Reasoning = &s, &s
		}
		content = c.String()
	}
	content, finish = cs.tools(&d, content, final, finish)
	if content != "" || (d.ReasoningContent == nil && d.ToolCalls == nil) {
		d.Content = &content
	}
	return d, finish
}

// tools moves the tool-call pieces of content into d and returns the rest.
func (cs *chatStream) tools(d *openai.ChatDelta, content string, final bool, finish *string) (string, *string) {
	co := cs.co
	switch co.mode {
	case openai.ToolChoiceAuto:
		cs.tbuf = cs.ts.Feed(cs.tbuf[:0], content)
		if final {
			cs.tbuf = cs.ts.Finish(cs.tbuf)
		}
		var c strings.Builder
		for _, x := range cs.tbuf {
			if x.Tool == nil {
				c.WriteString(x.Content)
				continue
			}
			addToolDelta(d, openai.ToolCallDelta{Index: x.Tool.Index, ID: x.Tool.ID, Function: openai.FunctionCallDelta{Name: x.Tool.Name, Arguments: x.Tool.Arguments}})
			cs.calls = max(cs.calls, x.Tool.Index+1)
		}
		if final && cs.calls > 0 {
			finish = ptrTo(finishToolCalls)
		}
		return c.String(), finish
	case openai.ToolChoiceFunction:
		td := openai.ToolCallDelta{Function: openai.FunctionCallDelta{Arguments: content}}
		if !cs.named {
			cs.named = true
			td.ID, td.Type, td.Function.Name = toolparser.NewID(nil), "function", co.name
		}
		if td.ID != "" || content != "" {
			addToolDelta(d, td)
		}
		return "", finish
	case openai.ToolChoiceRequired:
		cs.req.WriteString(content)
		if !final {
			return "", finish
		}
		calls, err := toolparser.ParseRequired(cs.req.String(), nil)
		if err != nil {
			return cs.req.String(), finish // not a call list: the text as content
		}
		for i, c := range calls {
			addToolDelta(d, openai.ToolCallDelta{Index: i, ID: c.ID, Type: "function", Function: openai.FunctionCallDelta{Name: c.Name, Arguments: c.Arguments}})
		}
		if finish != nil && *finish == "stop" {
			finish = ptrTo(finishToolCalls)
		}
		return "", finish
	}
	return content, finish
}

// addToolDelta appends td to d, merging it into the entry of the same call.
func addToolDelta(d *openai.ChatDelta, td openai.ToolCallDelta) {
	if td.ID != "" && td.Type == "" {
		td.Type = "function"
	}
	for i := range d.ToolCalls {
		if d.ToolCalls[i].Index == td.Index {
			d.ToolCalls[i].Function.Arguments += td.Function.Arguments
			return
		}
	}
	d.ToolCalls = append(d.ToolCalls, td)
}
