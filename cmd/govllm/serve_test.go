package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"govllm/internal/pooling"
	"govllm/internal/tensor"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"govllm/internal/model"
	"govllm/internal/testmodels"
)

func TestParseServeArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
		want func(c *serveConfig)
		err  error
	}{
		{"defaults", nil, "", func(c *serveConfig) {}, nil},
		{"model first", []string{"/m", "--port", "9000"}, "", func(c *serveConfig) { c.Model, c.Port = "/m", 9000 }, nil},
		{"model last", []string{"--port=9001", "/m"}, "", func(c *serveConfig) { c.Model, c.Port = "/m", 9001 }, nil},
		{"names repeat and comma", []string{"--served-model-name", "a,b", "--served-model-name=c"}, "", func(c *serveConfig) { c.ServedModelNames = []string{"a", "b", "c"} }, nil},
		{"no prefix caching", []string{"--no-enable-prefix-caching"}, "", func(c *serveConfig) { c.EnablePrefixCaching = false }, nil},
		{"prefix caching last wins", []string{"--no-enable-prefix-caching", "--enable-prefix-caching"}, "", func(c *serveConfig) {}, nil},
		{"kv memory", []string{"--kv-cache-memory", "2GiB"}, "", func(c *serveConfig) { c.KVCacheMemory = 2 << 30 }, nil},
		{"engine flags", []string{"--max-model-len", "256", "--max-num-seqs", "4", "--max-num-batched-tokens", "64", "--block-size", "8",
			"--scheduling-policy", "priority", "--num-gpu-blocks-override", "40", "--threads", "1", "--seed", "3", "--log-stats-interval", "1s"}, "",
			func(c *serveConfig) {
				c.MaxModelLen, c.MaxNumSeqs, c.MaxNumBatchedTokens, c.BlockSize = 256, 4, 64, 8
				c.SchedulingPolicy, c.NumGPUBlocksOverride, c.Threads, c.Seed, c.LogStatsInterval = "priority", 40, 1, 3, time.Second
			}, nil},
		{"front-end flags", []string{"--host", "127.0.0.1", "--disable-log-stats", "--disable-log-requests", "--chat-template", "t.jinja",
			"--generation-config", "vllm", "--load-format", "dummy", "--dummy-shape", "stories110m", "--tokenizer", "tok.bin"}, "",
			func(c *serveConfig) {
				c.Host, c.DisableLogStats, c.DisableLogRequests, c.ChatTemplate = "127.0.0.1", true, true, "t.jinja"
				c.GenerationConfig, c.LoadFormat, c.DummyShape, c.Tokenizer = "vllm", "dummy", "stories110m", "tok.bin"
			}, nil},
		{"quantization", []string{"--quantization", "q8_0"}, "", func(c *serveConfig) { c.Quantization = "q8_0" }, nil},
		{"quantization q4_0", []string{"--quantization", "q4_0"}, "", func(c *serveConfig) { c.Quantization = "q4_0" }, nil},
		{"unknown fields allowed", []string{"--allow-unknown-fields"}, "", func(c *serveConfig) { c.AllowUnknownFields = true }, nil},
		{"scheduling of threads", []string{"--engine-nice", "0", "--spare-procs", "2"}, "", func(c *serveConfig) { c.EngineNice, c.SpareProcs = 0, 2 }, nil},
		{"api key flag", []string{"--api-key", "k1"}, "k2", func(c *serveConfig) { c.APIKey = []string{"k1"} }, nil},
		{"CORS as vLLM parses it", []string{"--allowed-origins", `["https://a.example","https://b.example"]`, "--allowed-methods=[\"GET\",\"POST\"]",
			"--allowed-headers", "[]", "--allow-credentials"}, "", func(c *serveConfig) {
			c.AllowedOrigins, c.AllowedMethods = []string{"https://a.example", "https://b.example"}, []string{"GET", "POST"}
			c.AllowedHeaders, c.AllowCredentials = []string{}, true
		}, nil},
		{"pooler config", []string{"--pooler-config", `{"pooling_type": "MEAN", "normalize": false}`}, "", func(c *serveConfig) {
			c.Pooler = pooling.Params{Type: pooling.Mean}
		}, nil},
		{"runner pooling", []string{"--runner", "pooling"}, "", func(c *serveConfig) { c.Runner = "pooling" }, nil},
		{"convert embed", []string{"--convert=embed", "--runner", "auto"}, "", func(c *serveConfig) { c.Convert = "embed" }, nil},
		{"CORS credentials off", []string{"--allow-credentials", "--no-allow-credentials"}, "", func(c *serveConfig) {}, nil},
		{"api key env", nil, "k2", func(c *serveConfig) { c.APIKey = []string{"k2"} }, nil},
		{"responses store size", []string{"--responses-store-size", "5"}, "", func(c *serveConfig) { c.ResponsesStoreSize = 5 }, nil},
		{"no responses store", []string{"--responses-store-size=0"}, "", func(c *serveConfig) { c.ResponsesStoreSize = 0 }, nil},
		{"help", []string{"--help"}, "", nil, flag.ErrHelp},
		{"two models", []string{"/a", "/b"}, "", nil, errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOVLLM_API_KEY", tt.env)
			t.Setenv("VLLM_API_KEY", "")
			var stderr strings.Builder
			got, err := parseServeArgs(tt.args, &stderr)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaultServeConfig()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	var help strings.Builder
	parseServeArgs([]string{"--help"}, &help)
	if i := strings.Index(help.String(), "\nOther:\n"); i >= 0 {
		t.Errorf("serve --help lists flags in no group (add them to serveFlagGroups):%s", help.String()[i:])
	}
	for _, g := range serveFlagGroups {
		if !strings.Contains(help.String(), "\n"+g.title+":\n") {
			t.Errorf("--help lacks the group %q", g.title)
		}
	}
	for _, f := range []string{"--host", "--port", "--served-model-name", "--api-key", "--max-model-len", "--kv-cache-memory",
		"--generation-config", "--no-enable-prefix-caching", "--dummy-shape", "--quantization", "--log-stats-interval",
		"--engine-nice", "--spare-procs", "--model", "--shutdown-timeout", "--enable-log-requests", "--tensor-parallel-size",
		"--gpu-memory-utilization", "--dtype", "--trust-remote-code", "--enforce-eager", "--swap-space", "Usage: govllm serve [MODEL]"} {
		if !strings.Contains(help.String(), strings.TrimPrefix(f, "-")) {
			t.Errorf("--help does not document %s", f)
		}
	}
}

func TestServeProcs(t *testing.T) {
	tests := []struct {
		name                          string
		threads, spare, current, want int
		envSet                        bool
	}{
		{"one spare beyond the threads", 2, 1, 2, 3, false},
		{"two spare", 2, 2, 2, 4, false},
		{"spare 0 keeps the default", 2, 0, 2, 2, false},
		{"negative spare keeps the default", 2, -1, 2, 2, false},
		{"default already larger", 2, 1, 8, 8, false},
		{"threads above the default", 4, 1, 2, 5, false},
		{"threads 0 counts as 1", 0, 1, 1, 2, false},
		{"$GOMAXPROCS wins", 2, 1, 2, 2, true},
		{"$GOMAXPROCS wins even when smaller", 4, 1, 1, 1, true},
	}
	for _, tt := range tests {
		if got := serveProcs(tt.threads, tt.spare, tt.current, tt.envSet); got != tt.want {
			t.Errorf("%s: serveProcs(%d, %d, %d, %v) = %d, want %d", tt.name, tt.threads, tt.spare, tt.current, tt.envSet, got, tt.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1024", 1024, false}, {"2GiB", 2 << 30, false}, {"512MiB", 512 << 20, false}, {"1.5GB", 1_500_000_000, false},
		{"64k", 64 << 10, false}, {"3 TiB", 3 << 40, false}, {"10B", 10, false},
		{"", 0, true}, {"GiB", 0, true}, {"12XB", 0, true}, {"-1", 0, true}, {"0", 0, true},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d (err %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// testServeConfig is a small, fast stack: dummy model, small KV cache.
func testServeConfig() serveConfig {
	c := defaultServeConfig()
	c.MaxModelLen = 256
	c.MaxNumSeqs = 8
	c.MaxNumBatchedTokens = 256
	c.KVCacheMemory = 32 << 20
	c.Threads = 2
	c.DisableLogRequests = true
	c.ShutdownTimeout = 5 * time.Second
	return c
}

// startServe runs serve on a loopback listener and returns its base URL and
// a stop function that cancels the context and returns serve's error.
func startServe(t testing.TB, cfg serveConfig) (string, func() error) {
	t.Helper()
	return startServeLog(t, cfg, slog.New(slog.DiscardHandler))
}

// startServeLog is startServe with serve's log going to logger.
func startServeLog(t testing.TB, cfg serveConfig, logger *slog.Logger) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, cfg, logger) }()
	url := "http://" + ln.Addr().String()
	waitHealthy(t, url)
	var once bool
	var serveErr error
	stop := func() error {
		if !once {
			once = true
			cancel()
			serveErr = <-done
		}
		return serveErr
	}
	t.Cleanup(func() { stop() })
	return url, stop
}

func waitHealthy(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server did not become healthy")
}

// metricValue reads one sample from /metrics (series is the full name with
// labels, as exposed).

// TestServeDummyStack runs the whole stack (dummy model → runner → core →
// AsyncEngine → httpapi, with metrics) on a real listener and drives it with
// the official OpenAI SDK, then shuts it down as SIGINT would.
func TestServeDummyStack(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	cfg.APIKey = []string{"key"}
	url, stop := startServe(t, cfg)
	client := sdk.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("key"), option.WithMaxRetries(0))
	ctx := context.Background()

	prompt := sdk.CompletionNewParamsPromptUnion{OfString: sdk.String("Hello there")}
	params := sdk.CompletionNewParams{Model: "dummy", Prompt: prompt, MaxTokens: sdk.Int(8), Temperature: sdk.Float(0)}
	c, err := client.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Usage.CompletionTokens != 8 || c.Choices[0].FinishReason != "length" {
		t.Fatalf("completion %+v", c)
	}
	// Greedy streaming gives the same text as the plain request.
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := client.Completions.NewStreaming(ctx, params)
	var text string
	for s.Next() {
		for _, ch := range s.Current().Choices {
			text += ch.Text
		}
	}
	if err := s.Err(); err != nil || text != c.Choices[0].Text {
		t.Fatalf("streamed %q, want %q (%v)", text, c.Choices[0].Text, err)
	}
	cc, err := client.Chat.Completions.New(ctx, sdk.ChatCompletionNewParams{Model: "dummy",
		Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")}, MaxCompletionTokens: sdk.Int(4), N: sdk.Int(2), Seed: sdk.Int(1)})
	if err != nil || len(cc.Choices) != 2 || cc.Usage.CompletionTokens != 8 {
		t.Fatalf("chat n=2: %+v, %v", cc, err)
	}

	// Counters moved for the 3 requests (4 sequences); HTTP metrics too
	// (recorded as the handler returns, so poll).
	sc := &scraper{url: url, hc: http.DefaultClient}
	sc.await(t, "counters after 3 requests", 20*time.Second, func(s *scrape) []check {
		return []check{
			eq("request_success{length}", s.sum("vllm:request_success_total", "finished_reason", "length"), 4),
			eq("http_requests_total{/v1/completions,2xx}", s.sum("http_requests_total", "handler", "/v1/completions", "status", "2xx"), 2),
		}
	})
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after shutdown", err)
	}
}

// TestServeClientDisconnect: a streaming client that goes away aborts its
// engine request; the running gauge and KV usage return to 0 and the abort
// is counted (govllm counts client aborts, docs/metrics.md decision 6).
func TestServeClientDisconnect(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	url, stop := startServe(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"prompt":"a long story","max_tokens":240,"ignore_eos":true,"stream":true}`
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first chunk %q, %v", line, err)
	}
	sc := &scraper{url: url, hc: http.DefaultClient}
	sc.await(t, "while streaming", 20*time.Second, func(s *scrape) []check {
		return []check{eq("running", s.sum("vllm:num_requests_running"), 1), gt("kv usage", s.sum("vllm:kv_cache_usage_perc"), 0)}
	})
	cancel()
	resp.Body.Close()
	sc.await(t, "after the disconnect", 30*time.Second, func(s *scrape) []check {
		return []check{
			eq("request_success{abort}", s.sum("vllm:request_success_total", "finished_reason", "abort"), 1),
			eq("running", s.sum("vllm:num_requests_running"), 0),
			eq("kv usage", s.sum("vllm:kv_cache_usage_perc"), 0),
		}
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeStories260K serves the real stories260K-hf checkpoint and checks
// a greedy completion against llama2.c's golden output.
func TestServeStories260K(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K-hf")
	golden, err := os.ReadFile(filepath.Join(testmodels.Dir(t, "stories260K"), "golden", "once_upon_a_time.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.Model = dir
	url, stop := startServe(t, cfg)
	resp, err := http.Post(url+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"Once upon a time","max_tokens":24,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := jsonUnmarshal(b, &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	got := "Once upon a time" + out.Choices[0].Text
	if !strings.HasPrefix(string(golden), got) || len(out.Choices[0].Text) < 40 {
		t.Fatalf("greedy output diverges from llama2.c:\n got: %q\nwant: %q…", got, string(golden)[:len(got)])
	}
	if out.Model != dir {
		t.Fatalf("default served model name %q, want the model path", out.Model)
	}
	// The model's chat template is used for chat.
	resp, err = http.Post(url+"/tokenize", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), `{"count":`) || !strings.Contains(string(b), `"tokens":[1,`) {
		t.Fatalf("tokenize chat: %d %s", resp.StatusCode, b)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// noLeaks checks, after every other cleanup (the server's stop included),
// that the test left no goroutine behind.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// TestServeGracefulShutdown: on the shutdown signal an in-flight stream
// runs to its end ([DONE]) before serve returns.
func TestServeGracefulShutdown(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.ShutdownTimeout = 60 * time.Second
	url, stop := startServe(t, cfg)
	body := `{"prompt":"story","max_tokens":48,"ignore_eos":true,"stream":true}`
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first chunk %q, %v", line, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("stream cut during shutdown: %v", err)
	}
	if !strings.HasSuffix(string(rest), "data: [DONE]\n\n") || !strings.Contains(string(rest), `"finish_reason":"length"`) {
		t.Fatalf("stream did not finish: %q", rest)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

func TestKVBlocks(t *testing.T) {
	mc := model.Config{Dim: 64, NumLayers: 2, NumHeads: 4, NumKVHeads: 4, HeadDim: 16, VocabSize: 512, HiddenDim: 128, MaxSeqLen: 512}
	per := mc.KVBytesPerToken(nil) // 2 (K,V) × 2 layers × 64 × 4 bytes = 1 KiB
	tests := []struct {
		name                         string
		mem                          int64
		override, maxLen, seqs, want int
		err                          bool
	}{
		{"from memory", int64(per) * 16 * 100, 0, 256, 64, 100, false},
		{"capped at max-num-seqs full sequences", int64(per) * 16 * 10000, 0, 256, 4, 64, false},
		{"override wins", 1, 50, 256, 4, 50, false},
		{"too small for one sequence", int64(per) * 16 * 10, 0, 256, 4, 0, true},
		{"override too small", 0, 3, 256, 4, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testServeConfig().engineConfig
			c.KVCacheMemory, c.NumGPUBlocksOverride, c.MaxModelLen, c.MaxNumSeqs, c.BlockSize = tt.mem, tt.override, tt.maxLen, tt.seqs, 16
			r, err := c.resolve(mc)
			if got := r.NumBlocks; (err != nil) != tt.err || got != tt.want {
				t.Fatalf("kvBlocks = %d, %v; want %d (err %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestLoadGenerationConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"temperature":0.6,"top_p":0.9,"top_k":40,"eos_token_id":[1,2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "g.json")
	os.WriteFile(bad, []byte(`{"top_p":7}`), 0o644)
	tests := []struct {
		name, model, gc string
		temp            float32
		topK            int
		err             bool
	}{
		{"auto from model dir", dir, "auto", 0.6, 40, false},
		{"auto without model", "", "auto", 1, 0, false},
		{"vllm ignores the file", dir, "vllm", 1, 0, false},
		{"explicit dir", "", dir, 0.6, 40, false},
		{"invalid values", "", bad, 0, 0, true},
		{"missing path", "", filepath.Join(dir, "nope.json"), 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testServeConfig()
			c.Model, c.GenerationConfig = tt.model, tt.gc
			p, err := loadGenerationConfig(c)
			if tt.err {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil || p.Temperature != tt.temp || p.TopK != tt.topK {
				t.Fatalf("%+v, %v", p, err)
			}
		})
	}
}

// --chat-template is used; with --disable-log-stats /metrics still answers, with the HTTP and
// process families but no vllm:* family.
func TestServeDisableLogStats(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.DisableLogStats = true
	cfg.ChatTemplate = filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(cfg.ChatTemplate, []byte("[{{ messages[0]['content'] }}]"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, cfg)
	// --chat-template replaces the model's template.
	if r, err := http.Post(url+"/tokenize", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`)); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if !strings.Contains(string(b), `"tokens":[91,104,105,93]`) {
			t.Fatalf("--chat-template not used: %s", b)
		}
	}
	if r, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a","max_tokens":2}`)); err != nil || r.StatusCode != 200 {
		t.Fatalf("completion: %v", err)
	} else {
		r.Body.Close()
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics Content-Type %q", ct)
	}
	text := string(b)
	if strings.Contains(text, "vllm:") || !strings.Contains(text, `http_requests_total{handler="/v1/completions",method="POST",status="2xx"} 1`) ||
		!strings.Contains(text, "go_goroutines") {
		t.Fatalf("/metrics with --disable-log-stats:\n%s", text)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadModelQuantization(t *testing.T) {
	cfg := defaultServeConfig()
	cfg.Quantization = "q4_k"
	if _, _, err := loadModel(cfg.engineConfig, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "--quantization") || !strings.Contains(err.Error(), "q4_k_m") {
		t.Fatalf("loadModel with --quantization q4_k: err = %v, want a --quantization error listing the names", err)
	}
	for _, tc := range []struct {
		q    string
		want []tensor.DType
	}{
		{"q8_0", []tensor.DType{tensor.Q8_0}},
		// Q4_0 where the CPU has the kernels, else its exact Q8_0 expansion.
		{"q4_0", []tensor.DType{tensor.Q4_0, tensor.Q8_0}},
		{"", []tensor.DType{tensor.F32}},
		// The default shape's 288 columns are not whole super-blocks:
		// llama.cpp's fallback gives Q4_K → Q5_0 and IQ4_XS → IQ4_NL.
		{"q4_k_m", []tensor.DType{tensor.Q5_0}},
		{"iq4_xs", []tensor.DType{tensor.IQ4_NL}},
		{"q5_1", []tensor.DType{tensor.Q5_1}},
	} {
		cfg.Quantization = tc.q
		m, _, err := loadModel(cfg.engineConfig, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Layers[0].Wqkv.Type; !slices.Contains(tc.want, got) {
			t.Fatalf("dummy model with --quantization %q has %v attention weights, want one of %v", tc.q, got, tc.want)
		}
	}
}

func TestServeURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"[::]:8000", "http://127.0.0.1:8000"},
		{"0.0.0.0:8001", "http://127.0.0.1:8001"},
		{"127.0.0.1:8002", "http://127.0.0.1:8002"},
		{"[::1]:8003", "http://[::1]:8003"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := serveURL(addr); got != tc.want {
			t.Errorf("serveURL(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestServeBadFlagIsAUsageError(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"serve", "--no-such-flag"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "no-such-flag"); n != 1 {
		t.Errorf("the bad flag is reported %d times, want once:\n%s", n, stderr.String())
	}
}

func TestServeRejectsEngineNiceOutOfRange(t *testing.T) {
	for _, nice := range []int{-1, 20} {
		cfg := testServeConfig()
		cfg.EngineNice = nice
		st, err := newServeStack(cfg, nil)
		if err == nil {
			st.Close()
			t.Errorf("--engine-nice %d: no error", nice)
		} else if !strings.Contains(err.Error(), "--engine-nice") {
			t.Errorf("--engine-nice %d: error %q does not name the flag", nice, err)
		}
	}
}

// TestServeDummyWithTokenizer: --load-format dummy --tokenizer FILE serves
// that tokenizer (its ids are the reference implementation's) over a
// random model with its vocabulary size; a tokenizer larger than a real
// model's vocabulary is refused at start-up with the two sizes (it was a
// nil-pointer panic).
func TestServeDummyWithTokenizer(t *testing.T) {
	noLeaks(t)
	dir := testmodels.Dir(t, "stories260K")
	g := testmodels.LoadGolden(t, "once_upon_a_time")
	cfg := testServeConfig()
	cfg.LoadFormat, cfg.Tokenizer = "dummy", filepath.Join(dir, "tok512.bin")
	url, stop := startServe(t, cfg)
	resp, err := http.Post(url+"/tokenize", "application/json", strings.NewReader(`{"prompt":`+strconv.Quote(g.Prompt)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct{ Tokens []int32 }
	err = json.NewDecoder(resp.Body).Decode(&tr)
	resp.Body.Close()
	if err != nil || !slices.Equal(tr.Tokens, g.PromptIDs()) {
		t.Fatalf("/tokenize %q = %v (%v), want the reference ids %v", g.Prompt, tr.Tokens, err, g.PromptIDs())
	}
	if r := post(t, url, "/v1/completions", `{"prompt":"Once","max_tokens":3}`); r.status != 200 {
		t.Fatalf("completion: %d %s", r.status, r.body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	bigTok := filepath.Join(testmodels.Dir(t, "vocab"), "hf-tokenizers", "llama-bpe", "tokenizer.json") // 128,256 tokens
	cfg = testServeConfig()
	cfg.Model, cfg.Tokenizer = filepath.Join(dir, "stories260K.gguf"), bigTok
	_, err = newServeStack(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "128256") || !strings.Contains(err.Error(), "512") {
		t.Fatalf("a Llama-3 tokenizer for a 512-token model: %v, want an error naming both sizes", err)
	}
}

// TestServeSyntheticArchitectures: each architecture's synthetic model
// (llama.cpp's conformance files) is served with its family's chat template
// and answers a chat request; the prompt the template renders reaches the
// engine (usage counts its tokens).
func TestServeSyntheticArchitectures(t *testing.T) {
	noLeaks(t)
	syn := testmodels.Dir(t, "synthetic")
	tmpl := filepath.Join(filepath.Dir(syn), "..", "templates")
	for _, tc := range []struct{ arch, template string }{
		{"llama", "meta-llama-Llama-3.1-8B-Instruct.jinja"},
		{"qwen2", "Qwen-Qwen2.5-7B-Instruct.jinja"},
		{"qwen3", "Qwen-Qwen3-0.6B.jinja"},
		{"qwen3moe", "Qwen-Qwen3-0.6B.jinja"},
		{"phi3", "microsoft-Phi-3.5-mini-instruct.jinja"},
		{"gemma2", "google-gemma-2-2b-it.jinja"},
		{"gemma3", "google-gemma-2-2b-it.jinja"},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			cfg := testServeConfig()
			cfg.Model = filepath.Join(syn, tc.arch, tc.arch+"-Q8_0.gguf")
			cfg.ChatTemplate = filepath.Join(tmpl, tc.template)
			url, stop := startServe(t, cfg)
			r := post(t, url, "/v1/chat/completions", `{"messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":8,"temperature":0}`)
			var out struct {
				Choices []struct {
					Message struct{ Content string }
				}
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(r.body), &out); r.status != 200 || err != nil || len(out.Choices) != 1 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if out.Usage.CompletionTokens != 8 || out.Usage.PromptTokens < len("Tell me a story.")/4 || out.Choices[0].Message.Content == "" {
				t.Fatalf("usage %+v, content %q", out.Usage, out.Choices[0].Message.Content)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
