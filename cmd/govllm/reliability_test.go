package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/sched"
)

// The regression tests of docs/reliability.md: each case runs over HTTP
// against the real server (dummy model), and after each the server is
// still healthy and serving other clients.

// apiReply is one HTTP exchange's status and OpenAI error param.
type apiReply struct {
	status int
	param  string
	body   string
}

func post(t *testing.T, url, path, body string, hdr ...string) apiReply {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) apiReply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Error struct {
			Param *string `json:"param"`
		} `json:"error"`
	}
	json.Unmarshal(b, &env)
	r := apiReply{status: resp.StatusCode, body: string(b)}
	if env.Error.Param != nil {
		r.param = *env.Error.Param
	}
	return r
}

// stillServing checks /health (want) and that a small completion is served
// (when the engine is alive) or refused with 503 (when it is not).
func stillServing(t *testing.T, url string, health int, hdr ...string) {
	t.Helper()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatalf("after the case: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != health {
		t.Fatalf("/health = %d, want %d", resp.StatusCode, health)
	}
	want := 200
	if health != 200 {
		want = 503
	}
	if r := post(t, url, "/v1/completions", `{"prompt":"ok","max_tokens":2}`, hdr...); r.status != want {
		t.Fatalf("a normal request got %d, want %d: %s", r.status, want, r.body)
	}
}

// TestRequestsCannotKillTheServer: cases 1–3 of the issue, integers that
// overflowed a length check or asked for unbounded work.
func TestRequestsCannotKillTheServer(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.Limits.MaxTokens = 4096
	url, _ := startServe(t, cfg)
	const maxInt = "9223372036854775807"
	tests := []struct {
		name, path, body, param string
	}{
		{"completions max_tokens 2^63-1", "/v1/completions", `{"prompt":"a","max_tokens":` + maxInt + `}`, "max_tokens"},
		{"completions max_tokens 2^63-4", "/v1/completions", `{"prompt":"a","max_tokens":9223372036854775804}`, "max_tokens"},
		{"chat max_tokens 2^63-1", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"max_tokens":` + maxInt + `}`, "max_tokens"},
		{"chat max_completion_tokens 2^63-4", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":9223372036854775804}`, "max_tokens"},
		{"completions token prompt, max_tokens 2^63-1", "/v1/completions", `{"prompt":[1,2,3],"max_tokens":` + maxInt + `}`, "max_tokens"},
		{"n 2^62", "/v1/completions", `{"prompt":"a","n":4611686018427387904,"max_tokens":1}`, "n"},
		{"n 2^63-1", "/v1/completions", `{"prompt":"a","n":` + maxInt + `,"max_tokens":1}`, "n"},
		{"chat n 2^63-1", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"n":` + maxInt + `,"max_tokens":1}`, "n"},
		{"n 10^5", "/v1/completions", `{"prompt":"a","n":100000,"max_tokens":1}`, "n"},
		{"n 10^7", "/v1/completions", `{"prompt":"a","n":10000000,"max_tokens":1}`, "n"},
		{"n above --max-request-n", "/v1/completions", `{"prompt":"a","n":129,"max_tokens":1}`, "n"},
		{"best_of 2^63-1", "/v1/completions", `{"prompt":"a","best_of":` + maxInt + `,"max_tokens":1}`, "best_of"},
		{"prompts × n above --max-request-sequences", "/v1/completions", `{"prompt":[` + strings.Repeat(`"a",`, 199) + `"a"],"n":6,"max_tokens":1}`, "n"},
		{"n × max_tokens above --max-request-tokens", "/v1/completions", `{"prompt":"a","n":20,"max_tokens":250}`, "max_tokens"},
		{"n × absent max_tokens above --max-request-tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"n":20}`, "max_tokens"},
		{"min_tokens 2^63-1", "/v1/completions", `{"prompt":"a","min_tokens":` + maxInt + `,"max_tokens":2}`, "min_tokens"},
		{"max_tokens beyond int64", "/v1/completions", `{"prompt":"a","max_tokens":92233720368547758070}`, "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, url, tt.path, tt.body)
			if r.status != 400 || r.param != tt.param {
				t.Fatalf("got %d param %q, want 400 param %q: %s", r.status, r.param, tt.param, r.body)
			}
			stillServing(t, url, 200)
		})
	}
	// At the limits the work is served.
	if r := post(t, url, "/v1/completions", `{"prompt":"a","n":16,"max_tokens":256}`); r.status != 400 || r.param != "max_tokens" {
		t.Fatalf("a prompt plus max_tokens beyond max-model-len: %d %s", r.status, r.body)
	}
	if r := post(t, url, "/v1/completions", `{"prompt":"a","n":16,"max_tokens":4}`); r.status != 200 {
		t.Fatalf("n=16: %d %s", r.status, r.body)
	}
}

// syncBuffer is a log destination several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rawExchange sends req on a fresh TCP connection, half-closes it, and
// returns the status line of the answer.
func rawExchange(t *testing.T, url, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestBrokenBodiesAre400: case 4, a body that cannot be read is the
// client's fault: 400, not a 500 logged as a server error.
func TestBrokenBodiesAre400(t *testing.T) {
	noLeaks(t)
	var logBuf syncBuffer
	url, _ := startServeLog(t, testServeConfig(), slog.New(slog.NewTextHandler(&logBuf, nil)))
	head := "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	tests := []struct{ name, req, want string }{
		{"content-length longer than the body", head + "Content-Length: 100\r\n\r\n" + `{"prompt":"a"`, "HTTP/1.1 400 Bad Request"},
		{"bad chunk size", head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"chunked body cut short", head + "Transfer-Encoding: chunked\r\n\r\n40\r\n" + `{"prompt":"a"`, "HTTP/1.1 400 Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rawExchange(t, url, tt.req); got != tt.want {
				t.Fatalf("status line %q, want %q", got, tt.want)
			}
			stillServing(t, url, 200)
		})
	}
	if strings.Contains(logBuf.String(), "level=ERROR") {
		t.Fatalf("a broken body was logged as a server error:\n%s", logBuf.String())
	}
}

// TestAuthBeforeRouting: case 5, with an API key every /v1 path answers
// 401 without it, routed or not, whatever the method.
func TestAuthBeforeRouting(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.APIKey = []string{"sekret", "other"} // vLLM's --api-key takes several: each is accepted
	url, _ := startServe(t, cfg)
	tests := []struct {
		method, path string
		withKey      int
	}{
		{"POST", "/v1/completions", 400}, // an empty body, past the key
		{"GET", "/v1/completions", 405},
		{"DELETE", "/v1/chat/completions", 405},
		{"GET", "/v1/models", 200},
		{"GET", "/v1/nope", 404},
		{"POST", "/v1/", 404},
		{"GET", "/v1", 404},
		{"GET", "/v1x/anything", 404},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, url+tt.path, nil)
			if r := do(t, req); r.status != 401 {
				t.Fatalf("without the key: %d, want 401: %s", r.status, r.body)
			}
			for key, want := range map[string]int{"sekret": tt.withKey, "other": tt.withKey, "sekre": 401, "sekretother": 401} {
				req, _ = http.NewRequest(tt.method, url+tt.path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if r := do(t, req); r.status != want {
					t.Fatalf("with key %q: %d, want %d: %s", key, r.status, want, r.body)
				}
			}
		})
	}
	// Outside /v1 no key is needed (vLLM: /health, /metrics, /tokenize …).
	for _, p := range []string{"/health", "/metrics", "/nope"} {
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 401 {
			t.Fatalf("%s asks for the key", p)
		}
	}
	stillServing(t, url, 200, "Authorization", "Bearer sekret")
}

// faultyExecutor fails (or panics) in the first step after armed is set;
// before, it paces the steps.
type faultyExecutor struct {
	core.Executor
	armed atomic.Bool
	panic bool
}

var errInjected = errors.New("injected executor fault")

func (f *faultyExecutor) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	if f.armed.Load() {
		if f.panic {
			panic("injected executor panic")
		}
		return nil, errInjected
	}
	// Paced until armed: the streams' 200 steps take ≥ 1 s, so none can
	// finish before the fault however fast the machine runs the model.
	time.Sleep(5 * time.Millisecond)
	return f.Executor.Execute(ctx, so)
}

// TestEngineFaultKeepsHTTPUp: case 6, the executor fails mid-step with 8
// streams in flight: every stream ends with an error event and [DONE],
// /health turns 503, new requests get 503, the process still answers
// HTTP, and serve returns an error (exit status 1) when it is stopped.
func TestEngineFaultKeepsHTTPUp(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panic=%v", panics), func(t *testing.T) {
			noLeaks(t)
			cfg := testServeConfig()
			fx := &faultyExecutor{panic: panics}
			cfg.wrapExecutor = func(e core.Executor) core.Executor { fx.Executor = e; return fx }
			var logBuf syncBuffer
			url, stop := startServeLog(t, cfg, slog.New(slog.NewTextHandler(&logBuf, nil)))
			const streams = 8
			bodies := make([]*bufio.Reader, streams)
			for i := range streams {
				resp, err := http.Post(url+"/v1/completions", "application/json",
					strings.NewReader(`{"prompt":"story","max_tokens":200,"ignore_eos":true,"stream":true}`))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				bodies[i] = bufio.NewReader(resp.Body)
				if line, err := bodies[i].ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
					t.Fatalf("stream %d: first chunk %q, %v", i, line, err)
				}
			}
			fx.armed.Store(true)
			for i, r := range bodies {
				rest, err := io.ReadAll(r)
				if err != nil {
					t.Fatalf("stream %d cut without an error event: %v", i, err)
				}
				s := string(rest)
				if !strings.Contains(s, `"error":`) || !strings.HasSuffix(s, "data: [DONE]\n\n") {
					t.Fatalf("stream %d did not end with an error event and [DONE]: %q", i, s[max(0, len(s)-300):])
				}
			}
			stillServing(t, url, 503)
			for _, p := range []string{"/metrics", "/v1/models", "/version"} {
				resp, err := http.Get(url + p)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("%s = %d with a dead engine", p, resp.StatusCode)
				}
			}
			err := stop()
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("serve returned %v, want the engine's cause", err)
			}
			if !strings.Contains(logBuf.String(), "engine died") {
				t.Fatalf("the engine's death was not logged:\n%s", logBuf.String())
			}
		})
	}
}

// TestMaxConnections: case 7, connections above --max-connections get 503
// with Retry-After, and a slot freed serves again.
func TestMaxConnections(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.MaxConnections = 4
	url, _ := startServe(t, cfg)
	addr := strings.TrimPrefix(url, "http://")
	// waitHealthy's keep-alive connection is one of the four: drop it.
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.Contains(line, "200") {
			t.Fatalf("held connection: %q %v", line, err)
		}
		held = append(held, c) // idle keep-alive from now on
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("5th connection: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := hc.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("a freed connection slot was not reused")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range held[1:] {
		c.Close()
	}
}
