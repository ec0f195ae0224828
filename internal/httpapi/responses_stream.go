package httpapi

import (
	"net/http"
	"strings"

	"govllm/internal/openai"
	"govllm/internal/output"
	"govllm/internal/stats"
)

// streamResponses streams a response as OpenAI's typed events:
// response.created, response.in_progress, then per output item
// response.output_item.added, its content events (content_part.added,
// output_text.delta… or reasoning_text.delta…, *.done, content_part.done;
// or function_call_arguments.delta…, function_call_arguments.done) and
// response.output_item.done, and last response.completed (or
// response.incomplete at max_output_tokens) with the whole response; on
// an engine failure an error event and response.failed. Every event has
// an "event:" line and a sequence_number; there is no [DONE].
func (s *Server) streamResponses(w http.ResponseWriter, r *http.Request, g *genRequest, src *fanIn) {
	e := &respEvents{sse: startSSE(w), cs: g.out.newStream()}
	start := s.newResponse(g, false, nil, nil)
	start.Status = "in_progress"
	e.emit(openai.ResponseEvent{Type: "response.created", Response: start})
	e.emit(openai.ResponseEvent{Type: "response.in_progress", Response: start})
	if e.err != nil || e.sse.flush() != nil {
		return
	}
	generated, cached := 0, 0
	err := streamLoop(src, func(_ int, o *output.RequestOutput) error {
		for i := range o.Outputs {
			c := &o.Outputs[i]
			generated += len(c.TokenIDs)
			if !empty(c) {
				e.feed(c)
			}
		}
		if o.Finished {
			cached = o.NumCachedTokens
		}
		if e.err != nil {
			return e.err
		}
		return e.sse.flush()
	})
	if err != nil {
		if r.Context().Err() == nil {
			e.fail(s, g, err)
		}
		return
	}
	m := messageOf(e.items)
	resp := s.newResponse(g, e.incomplete, e.items, s.responseUsage(g, generated, cached, m.Reasoning))
	typ := "response.completed"
	if e.incomplete {
		typ = "response.incomplete"
	}
	e.emit(openai.ResponseEvent{Type: typ, Response: resp})
	e.sse.flush()
	s.keep(g, resp, m)
}

// respEvents turns the chat deltas of the one choice into output items
// and their events. One item is open at a time: a delta of another kind
// (reasoning, content, a new tool call) closes it.
type respEvents struct {
	sse        *sseWriter
	cs         *chatStream
	seq        int
	err        error // the first write error: the client is gone
	items      []any // the items closed so far
	open       any   // *openai.ReasoningItem, *openai.MessageItem, *openai.FunctionCallItem or nil
	text       strings.Builder
	incomplete bool
}

func (e *respEvents) emit(ev openai.ResponseEvent) {
	if e.err != nil {
		return
	}
	ev.SequenceNumber = e.seq
	e.seq++
	e.err = e.sse.writeEvent(ev.Type, ev)
}

// feed shapes one output delta into events; the last one closes the
// output (a response always has an item: an empty message when the model
// said nothing).
func (e *respEvents) feed(c *output.CompletionOutput) {
	done := c.FinishReason != stats.FinishNone
	finish := openai.FinishReason(c.FinishReason)
	d, _ := e.cs.delta(c.Text, done, finish)
	if d.Reasoning != nil && *d.Reasoning != "" {
		e.reasoning(*d.Reasoning)
	}
	if d.Content != nil && *d.Content != "" {
		e.content(*d.Content)
	}
	for _, tc := range d.ToolCalls {
		e.call(tc)
	}
	if !done {
		return
	}
	e.incomplete = finish != nil && *finish == "length"
	e.close()
	if len(e.items) == 0 {
		e.content("")
		e.close()
	}
}

func (e *respEvents) index() *int { return ptrTo(len(e.items)) }

func (e *respEvents) reasoning(text string) {
	it, ok := e.open.(*openai.ReasoningItem)
	if !ok {
		e.close()
		it = &openai.ReasoningItem{Type: "reasoning", ID: itemID("rs"), Summary: []any{}, Content: []openai.ReasoningText{}, Status: "in_progress"}
		e.open = it
		e.emit(openai.ResponseEvent{Type: "response.output_item.added", OutputIndex: e.index(), Item: it})
		e.emit(openai.ResponseEvent{Type: "response.content_part.added", ItemID: it.ID, OutputIndex: e.index(), ContentIndex: ptrTo(0),
			Part: openai.ReasoningText{Type: "reasoning_text"}})
	}
	e.text.WriteString(text)
	e.emit(openai.ResponseEvent{Type: "response.reasoning_text.delta", ItemID: it.ID, OutputIndex: e.index(), ContentIndex: ptrTo(0), Delta: &text})
}

func (e *respEvents) content(text string) {
	it, ok := e.open.(*openai.MessageItem)
	if !ok {
		e.close()
		it = &openai.MessageItem{Type: "message", ID: itemID("msg"), Status: "in_progress", Role: "assistant", Content: []openai.OutputText{}}
		e.open = it
		e.emit(openai.ResponseEvent{Type: "response.output_item.added", OutputIndex: e.index(), Item: it})
		e.emit(openai.ResponseEvent{Type: "response.content_part.added", ItemID: it.ID, OutputIndex: e.index(), ContentIndex: ptrTo(0),
			Part: openai.NewOutputText("")})
	}
	if text == "" {
		return
	}
	e.text.WriteString(text)
	e.emit(openai.ResponseEvent{Type: "response.output_text.delta", ItemID: it.ID, OutputIndex: e.index(), ContentIndex: ptrTo(0),
		Delta: &text, Logprobs: &[]any{}})
}

// call streams a tool-call delta: one with an id starts a call.
func (e *respEvents) call(tc openai.ToolCallDelta) {
	it, ok := e.open.(*openai.FunctionCallItem)
	if !ok || tc.ID != "" {
		e.close()
		it = &openai.FunctionCallItem{Type: "function_call", ID: itemID("fc"), CallID: tc.ID, Name: tc.Function.Name, Status: "in_progress"}
		e.open = it
		e.emit(openai.ResponseEvent{Type: "response.output_item.added", OutputIndex: e.index(), Item: it})
	}
	if a := tc.Function.Arguments; a != "" {
		e.text.WriteString(a)
		e.emit(openai.ResponseEvent{Type: "response.function_call_arguments.delta", ItemID: it.ID, OutputIndex: e.index(), Delta: &a})
	}
}

// close ends the open item with its done events.
func (e *respEvents) close() {
	text := e.text.String()
	at := e.index()
	switch it := e.open.(type) {
	case nil:
		return
	case *openai.ReasoningItem:
		part := openai.ReasoningText{Type: "reasoning_text", Text: text}
		e.emit(openai.ResponseEvent{Type: "response.reasoning_text.done", ItemID: it.ID, OutputIndex: at, ContentIndex: ptrTo(0), Text: &text})
		e.emit(openai.ResponseEvent{Type: "response.content_part.done", ItemID: it.ID, OutputIndex: at, ContentIndex: ptrTo(0), Part: part})
		it.Content, it.Status = []openai.ReasoningText{part}, "completed"
	case *openai.MessageItem:
		part := openai.NewOutputText(text)
		e.emit(openai.ResponseEvent{Type: "response.output_text.done", ItemID: it.ID, OutputIndex: at, ContentIndex: ptrTo(0), Text: &text, Logprobs: &[]any{}})
		e.emit(openai.ResponseEvent{Type: "response.content_part.done", ItemID: it.ID, OutputIndex: at, ContentIndex: ptrTo(0), Part: part})
		it.Content, it.Status = []openai.OutputText{part}, itemStatus(e.incomplete)
	case *openai.FunctionCallItem:
		it.Arguments, it.Status = text, "completed"
		e.emit(openai.ResponseEvent{Type: "response.function_call_arguments.done", ItemID: it.ID, OutputIndex: at, Arguments: &text, Name: it.Name})
	}
	e.emit(openai.ResponseEvent{Type: "response.output_item.done", OutputIndex: at, Item: e.open})
	e.items = append(e.items, e.open)
	e.open = nil
	e.text.Reset()
}

// fail reports an engine failure: an error event, then response.failed.
func (e *respEvents) fail(s *Server, g *genRequest, err error) {
	status, param := classify(err)
	msg := err.Error()
	code := "invalid_request_error"
	if status >= 500 {
		code = "server_error"
	}
	if status == http.StatusInternalServerError {
		msg = "internal server error"
	}
	ev := openai.ResponseEvent{Type: "error", Code: &code, Message: msg}
	if param != "" {
		ev.Param = &param
	}
	e.emit(ev)
	resp := s.newResponse(g, false, e.items, nil)
	resp.Status, resp.Error = "failed", &openai.ResponseError{Code: code, Message: msg}
	e.emit(openai.ResponseEvent{Type: "response.failed", Response: resp})
	e.sse.flush()
}

// messageOf is the assistant message the streamed items make (for the
// store and the usage).
func messageOf(items []any) openai.ResponseMessage {
	m := openai.ResponseMessage{Role: "assistant"}
	for _, x := range items {
		switch it := x.(type) {
		case *openai.ReasoningItem:
			m.Reasoning = &it.Content[0].Text
		case *openai.MessageItem:
			t := it.Content[0].Text
			if m.Content != nil {
				t = *m.Content + t
			}
			m.Content = &t
		case *openai.FunctionCallItem:
			m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: it.CallID, Type: "function", Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}})
		}
	}
	return m
}
