package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/kvcache"
	"govllm/internal/llm"
	"govllm/internal/openai"
	"govllm/internal/sched"
)

// FuzzRequestPath drives the whole request path with extreme integers:
// decode the JSON body, prepare it (completions or chat), check it against
// the engine's limits, then add every prompt to a real scheduler through
// the synchronous front end. Nothing may panic; a refusal anywhere must be
// a client error (4xx), and a request the server's checks pass must be
// accepted by the engine. Run long with
//
//	go test -run '^$' -fuzz FuzzRequestPath -fuzztime 10m ./internal/httpapi
func FuzzRequestPath(f *testing.F) {
	const maxInt = int64(^uint64(0) >> 1)
	for _, v := range []int64{0, 1, -1, 16, 255, 256, 257, 1 << 20, 1 << 31, 1 << 32, 1 << 62, maxInt, maxInt - 4, -maxInt - 1} {
		f.Add(false, v, int64(1), int64(1), int64(-2), int64(0), uint16(4))
		f.Add(true, v, int64(1), int64(-2), int64(-2), int64(0), uint16(4))
		f.Add(false, int64(8), v, int64(-2), int64(-2), int64(0), uint16(4))
		f.Add(true, int64(8), v, v, v, v, uint16(4))
		f.Add(false, int64(8), int64(2), v, v, v, uint16(200))
	}
	fake := newFake()
	s, err := New(Config{ServedModelNames: []string{model}}, fake)
	if err != nil {
		f.Fatal(err)
	}
	sc := sched.DefaultConfig()
	sc.MaxModelLen = fake.maxLen
	c, err := core.New(core.Config{Sched: sc, KV: kvcache.Config{NumBlocks: 64, BlockSize: 16, EnablePrefixCaching: true}}, &core.FakeExecutor{Vocab: 512})
	if err != nil {
		f.Fatal(err)
	}
	eng, err := llm.New(llm.Config{MaxModelLen: fake.maxLen}, c, fake.tok)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, chat bool, maxTokens, n, bestOf, logprobs, minTokens int64, promptLen uint16) {
		body := fuzzBody(chat, maxTokens, n, bestOf, logprobs, minTokens, int(promptLen%400))
		g, err := fuzzPrepare(s, chat, body)
		if err != nil {
			if status, _ := classify(err); status >= http.StatusInternalServerError {
				t.Fatalf("%s: status %d: %v", body, status, err)
			}
			return
		}
		var added []string
		for i := range g.prompts {
			pr := g.prompts[i].pr
			if err := eng.Submit(pr); err != nil {
				t.Fatalf("%s: checked request refused by the engine: %v", body, err)
			}
			added = append(added, pr.Request().ID)
		}
		eng.Abort(added...)
		for eng.HasUnfinished() {
			if _, err := eng.Step(context.Background()); err != nil {
				t.Fatalf("%s: step: %v", body, err)
			}
		}
	})
}

// fuzzBody writes a request body; a negative bestOf/logprobs of -2 leaves
// the field out.
func fuzzBody(chat bool, maxTokens, n, bestOf, logprobs, minTokens int64, promptLen int) string {
	var b strings.Builder
	if chat {
		fmt.Fprintf(&b, `{"messages":[{"role":"user","content":%q}],"max_completion_tokens":%d,"n":%d`, strings.Repeat("a", promptLen), maxTokens, n)
		if logprobs != -2 {
			fmt.Fprintf(&b, `,"logprobs":true,"top_logprobs":%d`, logprobs)
		}
	} else {
		ids := make([]string, max(promptLen, 1))
		for i := range ids {
			ids[i] = "7"
		}
		fmt.Fprintf(&b, `{"prompt":[%s],"max_tokens":%d,"n":%d`, strings.Join(ids, ","), maxTokens, n)
		if logprobs != -2 {
			fmt.Fprintf(&b, `,"logprobs":%d`, logprobs)
		}
	}
	if bestOf != -2 {
		fmt.Fprintf(&b, `,"best_of":%d`, bestOf)
	}
	fmt.Fprintf(&b, `,"min_tokens":%d}`, minTokens)
	return b.String()
}

// fuzzPrepare is serveGenerate up to the engine: decode, prepare, check.
func fuzzPrepare(s *Server, chat bool, body string) (*genRequest, error) {
	var g *genRequest
	var err error
	hr := httptest.NewRequest("POST", "/", nil)
	if chat {
		var req openai.ChatCompletionRequest
		if err := openai.DecodeRequest(strings.NewReader(body), &req, nil); err != nil {
			return nil, err
		}
		g, err = s.prepareChat(&req, hr, time.Now())
	} else {
		var req openai.CompletionRequest
		if err := openai.DecodeRequest(strings.NewReader(body), &req, nil); err != nil {
			return nil, err
		}
		g, err = s.prepareCompletion(&req, hr, time.Now())
	}
	if err != nil {
		return nil, err
	}
	return g, s.check(g)
}
