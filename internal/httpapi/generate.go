package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"govllm/internal/llm"
	"govllm/internal/openai"
	"govllm/internal/output"
	"govllm/internal/pooling"
	"govllm/internal/sampling"
)

// requestIDHeader carries a client's request id in and the one used out.
const requestIDHeader = "X-Request-Id"

// baseID is a request's id without its endpoint prefix, as vLLM takes it:
// the X-Request-Id header, else the body's request_id, else 32 random hex
// digits. llm.Preparer checks it (a printable token of bounded length).
func baseID(r *http.Request, fromBody string) string {
	if h := r.Header.Get(requestIDHeader); h != "" {
		return h
	}
	if fromBody != "" {
		return fromBody
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// genRequest is a validated generation request, ready for the engine: one
// engine request per prompt (chat has one prompt; completions one or more).
type genRequest struct {
	id       string // the response id: endpoint prefix + base
	base     string // the client's id (or a random one), echoed in X-Request-Id
	model    string
	arrival  time.Time
	prompts  []genPrompt
	params   sampling.Params // the request's; MaxTokens 0 = fill per prompt
	priority int
	truncate *int   // truncate_prompt_tokens
	tokenIDs bool   // return_token_ids
	user     string // the end user the client names (OpenAI "user"), logged with the request
	stream   bool
	usage    *openai.StreamOptions
	// Completions: echo puts each prompt before its choices' text;
	// echoOnly (echo with max_tokens 0) returns the prompt alone.
	echo, echoOnly bool
	// tools is a chat request's parsed tools, tool_choice and
	// parallel_tool_calls (nil without tools).
	tools *openai.ChatTools
	// out turns a chat choice's text into reasoning, content and tool
	// calls (nil: the text is the content).
	out *chatOutput
	// pooling makes every prompt an embedding request (/v1/embeddings):
	// params is then zero, and a "prompt" error names "input".
	pooling *pooling.Params
	// resp is a Responses API request's own state (nil for chat and
	// completions).
	resp *responsesState
}

// genPrompt is one prompt of a request, i.e. one engine request.
type genPrompt struct {
	ids  []int32
	echo string // completions "echo": the prompt text put before each choice's text
	// promptLogprobs are the prompt's logprobs once an output brought them
	// (a stream delivers them once, and every choice's first chunk echoes them).
	promptLogprobs []sampling.Logprobs
	pr             *llm.Prepared // the engine request, validated (by check)
}

// engineID is the engine request id of prompt i: the response id itself
// for a single prompt, "<id>-<i>" with several (as vLLM does).
func (g *genRequest) engineID(i int) string {
	if len(g.prompts) == 1 {
		return g.id
	}
	return g.id + "-" + strconv.Itoa(i)
}

// choiceIndex is the response index of sequence c of prompt i:
// i·n + c (vLLM's order).
func (g *genRequest) choiceIndex(i, c int) int { return i*max(g.params.N, 1) + c }

// serveGenerate is the flow the generation endpoints (and embeddings,
// which never stream) share: take the
// arrival time first (before decoding, template rendering and tokenization),
// decode the body, prepare (validate, render, tokenize), check every prompt
// against the engine's limits, start one engine request per prompt, then
// stream their merged outputs, or collect them and write respond's reply.
// Nothing reaches the engine unless every prompt is valid; when one
// engine request fails or the client leaves, all of them are aborted.
func serveGenerate[Req any](s *Server, w http.ResponseWriter, r *http.Request,
	prepare func(*Req, *http.Request, time.Time) (*genRequest, error),
	stream func(http.ResponseWriter, *http.Request, *genRequest, *fanIn),
	respond func(*genRequest, []*output.RequestOutput) any) {
	arrival := time.Now()
	if h := r.Header.Get(requestIDHeader); h != "" {
		w.Header().Set(requestIDHeader, h)
	}
	var req Req
	if err := openai.DecodeRequest(r.Body, &req, s.onUnknown()); err != nil {
		s.writeErr(w, r, err)
		return
	}
	g, err := prepare(&req, r, arrival)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.Header().Set(requestIDHeader, g.base)
	if err := s.check(g); err != nil {
		s.writeErr(w, r, err)
		return
	}
	src, err := s.start(r, g)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	defer src.close()
	if g.stream {
		stream(w, r, g, src)
		return
	}
	outs, err := src.collect()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, respond(g, outs))
}

// check validates every prompt through the engine's one request path
// (llm.Preparer; an error names the prompt when there are several), then
// the engine's health. Nothing is started before every prompt is valid.
func (s *Server) check(g *genRequest) error {
	reqs := make([]llm.Request, len(g.prompts))
	for i := range g.prompts {
		reqs[i] = llm.Request{ID: g.engineID(i), PromptTokenIDs: g.prompts[i].ids, Params: g.params,
			Priority: g.priority, ArrivalTime: g.arrival, OutputKind: g.kind(), TruncatePromptTokens: g.truncate, Pooling: g.pooling}
	}
	prs, err := s.eng.Prepare(reqs...)
	if err != nil && g.pooling != nil {
		return openai.AsInput(err)
	}
	if err != nil {
		return err
	}
	for i := range g.prompts {
		g.prompts[i].pr = prs[i]
		g.prompts[i].ids = prs[i].Request().PromptTokenIDs // as served (truncate_prompt_tokens)
	}
	return s.eng.Err() // ErrClosed (shutting down) or an ErrEngineDead wrap: 503 either way, each saying which
}

// kind is how outputs reach the handler: deltas when streaming.
func (g *genRequest) kind() output.Kind {
	if g.stream {
		return output.Delta
	}
	return output.FinalOnly
}

// start hands the checked prompts to the engine, one request each. Several
// share one context derived from the HTTP request's, so that one failing
// (to start, or later) aborts the others; a single prompt needs no more
// than the request's own context.
func (s *Server) start(r *http.Request, g *genRequest) (*fanIn, error) {
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if len(g.prompts) > 1 {
		ctx, cancel = context.WithCancel(ctx)
	}
	streams := make([]*output.Stream, 0, len(g.prompts))
	for i := range g.prompts {
		p := &g.prompts[i]
		if !s.cfg.DisableLogRequests {
			s.logRequest(r, g, p)
		}
		st, err := s.eng.Submit(ctx, p.pr)
		if err != nil {
			cancel()
			return nil, err
		}
		streams = append(streams, st)
	}
	return newFanIn(ctx, cancel, streams), nil
}

// logRequest is the one log line of an engine request: its sampling, or
// for an embedding its pooling.
func (s *Server) logRequest(r *http.Request, g *genRequest, p *genPrompt) {
	q := p.pr.Request()
	attrs := []any{"id", q.ID, "path", r.URL.Path, "prompt_tokens", len(p.ids)}
	if g.pooling != nil {
		attrs = append(attrs, "pooling", g.pooling.Type.String(), "normalize", g.pooling.Normalize)
	} else {
		attrs = append(attrs, "max_tokens", q.Params.MaxTokens, "n", q.Params.N, "temperature", q.Params.Temperature, "stream", g.stream)
	}
	s.log.Info("received request", append(attrs, "user", g.user)...)
}

// completionTokens counts the generated tokens of a final output.
func completionTokens(o *output.RequestOutput) int {
	n := 0
	for _, c := range o.Outputs {
		n += len(c.TokenIDs)
	}
	return n
}

// streamLoop reads the merged deltas until every stream ended, calling emit
// with each output and the index of its prompt. It returns nil at the end,
// ctx's error when the client left, or the engine's error (which the
// caller reports in the stream).
func streamLoop(src *fanIn, emit func(prompt int, o *output.RequestOutput) error) error {
	for {
		i, o, err := src.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := emit(i, o); err != nil {
			return err
		}
	}
}

// empty reports whether a delta carries nothing to send.
func empty(c *output.CompletionOutput) bool {
	return c.Text == "" && len(c.Logprobs) == 0 && c.FinishReason == 0
}

// streamDeltas is the streaming reply both generation endpoints share:
// open writes what precedes the deltas (chat's role chunks); then every
// non-empty delta of every prompt becomes the chunk choice returns (with
// the prompt's usage so far when continuous_usage_stats asks); after the
// last prompt finished, with include_usage, the chunk final returns for the
// whole request's usage (and with ResponseTimings every choice's
// timings); then [DONE], or an error event before it when the engine
// failed. A client that left gets nothing more.
func (s *Server) streamDeltas(w http.ResponseWriter, r *http.Request, g *genRequest, src *fanIn,
	open func(*sseWriter) error,
	choice func(prompt int, o *output.RequestOutput, c *output.CompletionOutput, usage *openai.Usage) any,
	final func(usage *openai.Usage, timings any) any) {
	sse := startSSE(w)
	if open != nil {
		if err := open(sse); err != nil {
			return
		}
	}
	generated := make([]int, len(g.prompts)) // per prompt, over its choices
	cached := make([]int, len(g.prompts))
	running := len(g.prompts)
	continuous := g.usage != nil && g.usage.IncludeUsage && g.usage.ContinuousUsageStats
	var timings []openai.Timings // of the finished choices, with ResponseTimings
	err := streamLoop(src, func(pi int, o *output.RequestOutput) error {
		for i := range o.Outputs {
			c := &o.Outputs[i]
			generated[pi] += len(c.TokenIDs)
			timings = s.addTimings(timings, g, pi, c)
			if empty(c) {
				continue
			}
			var u *openai.Usage
			if continuous {
				u = openai.NewUsage(len(g.prompts[pi].ids), generated[pi], o.NumCachedTokens)
			}
			if err := sse.write(choice(pi, o, c, u)); err != nil {
				return err
			}
		}
		if o.Finished {
			cached[pi] = o.NumCachedTokens
			running--
		}
		if running > 0 {
			return sse.flush()
		}
		if g.usage != nil && g.usage.IncludeUsage { // the last output: [DONE] follows and flushes
			return sse.write(final(openai.NewUsage(g.promptTokens(), sum(generated), sum(cached)), timingsOf(timings)))
		}
		return nil
	})
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left; the engine requests are aborted with the context
		}
		sse.fail(err)
	}
	sse.done()
}

// promptTokens counts every prompt's tokens once.
func (g *genRequest) promptTokens() int {
	n := 0
	for i := range g.prompts {
		n += len(g.prompts[i].ids)
	}
	return n
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
