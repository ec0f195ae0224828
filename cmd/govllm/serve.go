package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"govllm/internal/core"
	"govllm/internal/httpapi"
	"govllm/internal/kvcache"
	"govllm/internal/llm"
	"govllm/internal/metrics"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tensor"
	"govllm/internal/tokenizer"
)

// serveConfig is everything `govllm serve` is configured with (vLLM's flag
// names). Tests build one with defaultServeConfig and call serve or
// newServeStack directly.
type serveConfig struct {
	Model                string   // path; "" = built-in dummy model
	Host                 string   // listen host ("" = all interfaces)
	Port                 int      // listen port
	ServedModelNames     []string // default: Model, or "govllm-dummy"
	APIKey               string
	MaxModelLen          int // 0 = the model's context length
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	BlockSize            int
	EnablePrefixCaching  bool
	SchedulingPolicy     string // fcfs | priority
	DisableLogStats      bool
	DisableLogRequests   bool
	ChatTemplate         string // file
	GenerationConfig     string // "auto", "vllm", or a path
	KVCacheMemory        int64  // bytes
	NumGPUBlocksOverride int    // > 0 overrides the KV-memory sizing
	Threads              int
	// EngineNice lowers the OS priority of the forward pass's threads by
	// this many nice steps (0 = off), so HTTP handlers and /metrics
	// preempt them at once.
	EngineNice int
	// SpareProcs is how many Go processors beyond Threads the server keeps
	// for its HTTP goroutines (GOMAXPROCS = Threads + SpareProcs, unless
	// $GOMAXPROCS is set or the default is already larger).
	SpareProcs       int
	LoadFormat       string // auto | dummy
	DummyShape       string
	Quantization     string // "" (keep the file's types), q8_0 or q4_0
	Tokenizer        string // tokenizer path (llama2.c tok512.bin, tokenizer.json, HF dir, .gguf)
	LogStatsInterval time.Duration
	Seed             uint64
	// ShutdownGrace is how long in-flight requests may run after a signal
	// before their connections are closed (and their engine requests aborted).
	ShutdownGrace time.Duration
	// Limits bound one request's work (--max-request-n, -sequences, -tokens).
	Limits llm.Limits
	// MaxConnections caps open HTTP connections (503 above).
	MaxConnections int

	// wrapExecutor, when set, wraps the runner the core executes (tests
	// inject faults with it; no flag reaches it).
	wrapExecutor func(core.Executor) core.Executor
}

const dummyModelName = "govllm-dummy"

// defaultEngineNice is --engine-nice's default (see docs/performance.md,
// "/metrics scrape latency under load").
const defaultEngineNice = 10

func defaultServeConfig() serveConfig {
	return serveConfig{
		Port:                8000,
		MaxNumSeqs:          128,
		MaxNumBatchedTokens: 2048,
		BlockSize:           kvcache.DefaultBlockSize,
		EnablePrefixCaching: true,
		SchedulingPolicy:    "fcfs",
		GenerationConfig:    "auto",
		KVCacheMemory:       1 << 30,
		Threads:             runtime.NumCPU(),
		EngineNice:          defaultEngineNice,
		SpareProcs:          1,
		LoadFormat:          "auto",
		DummyShape:          "default",
		LogStatsInterval:    metrics.DefaultLogInterval,
		ShutdownGrace:       10 * time.Second,
		Limits:              llm.DefaultLimits(),
		MaxConnections:      httpapi.DefaultMaxConnections,
	}
}

// stringList is a repeatable, comma-splitting flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// parseServeArgs parses `govllm serve [MODEL] [flags]`. The API key falls
// back to the GOVLLM_API_KEY environment variable.
func parseServeArgs(args []string, stderr io.Writer) (serveConfig, error) {
	c := defaultServeConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names stringList
	kvMem := "1GiB"
	fs.StringVar(&c.Host, "host", c.Host, "listen host (default: all interfaces)")
	fs.IntVar(&c.Port, "port", c.Port, "listen port")
	fs.Var(&names, "served-model-name", "model name(s) the API accepts and reports; repeatable or comma-separated (default: MODEL, or "+dummyModelName+")")
	fs.StringVar(&c.APIKey, "api-key", "", "require 'Authorization: Bearer KEY' on /v1/* (default: $GOVLLM_API_KEY)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", 0, "max prompt + output tokens per request (default: the model's context length)")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", c.MaxNumSeqs, "max running sequences per step")
	fs.IntVar(&c.MaxNumBatchedTokens, "max-num-batched-tokens", c.MaxNumBatchedTokens, "token budget per step (prefill chunks + decodes)")
	fs.IntVar(&c.BlockSize, "block-size", c.BlockSize, "tokens per KV-cache block")
	fs.BoolFunc("enable-prefix-caching", "reuse the KV of shared prompt prefixes (default on)", func(string) error { c.EnablePrefixCaching = true; return nil })
	fs.BoolFunc("no-enable-prefix-caching", "turn prefix caching off", func(string) error { c.EnablePrefixCaching = false; return nil })
	fs.StringVar(&c.SchedulingPolicy, "scheduling-policy", c.SchedulingPolicy, "fcfs or priority (lower 'priority' runs first)")
	fs.BoolVar(&c.DisableLogStats, "disable-log-stats", false, "no engine statistics: no vllm:* metrics and no periodic log line")
	fs.BoolVar(&c.DisableLogRequests, "disable-log-requests", false, "do not log each request")
	fs.StringVar(&c.ChatTemplate, "chat-template", "", "chat template file (Jinja), overriding the model's")
	fs.StringVar(&c.GenerationConfig, "generation-config", c.GenerationConfig, "default sampling parameters: 'auto' (MODEL's generation_config.json), 'vllm' (built-in defaults) or a path")
	fs.StringVar(&kvMem, "kv-cache-memory", kvMem, "KV-cache memory budget, e.g. 512MiB, 2GiB, 1.5GB or bytes")
	fs.IntVar(&c.NumGPUBlocksOverride, "num-gpu-blocks-override", 0, "number of KV blocks, overriding --kv-cache-memory")
	fs.IntVar(&c.Threads, "threads", c.Threads, "CPU threads for the forward pass")
	fs.IntVar(&c.EngineNice, "engine-nice", c.EngineNice, "lower the OS priority (nice, 0–19) of the forward pass's threads by this much, so HTTP\nrequests and /metrics scrapes preempt them at once; 0 = normal priority (Linux only)")
	fs.IntVar(&c.SpareProcs, "spare-procs", c.SpareProcs, "Go processors kept for the HTTP server beyond --threads: GOMAXPROCS = threads + N\n(unless $GOMAXPROCS is set or larger already), so a request never waits for the forward pass\nto yield one")
	fs.StringVar(&c.LoadFormat, "load-format", c.LoadFormat, "auto (read MODEL) or dummy (random weights of --dummy-shape)")
	fs.StringVar(&c.DummyShape, "dummy-shape", c.DummyShape, "shape of the built-in random model: "+strings.Join(model.DummyShapes(), ", "))
	fs.StringVar(&c.Quantization, "quantization", "", quantizationUsage)
	fs.StringVar(&c.Tokenizer, "tokenizer", "", "tokenizer path (llama2.c tok512.bin, tokenizer.json, HF dir or .gguf; default: from MODEL)")
	fs.DurationVar(&c.LogStatsInterval, "log-stats-interval", c.LogStatsInterval, "interval of the statistics log line")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed of unseeded sampling")
	fs.IntVar(&c.Limits.MaxN, "max-request-n", c.Limits.MaxN, "max n (sequences per prompt) of one request; 400 above")
	fs.IntVar(&c.Limits.MaxSequences, "max-request-sequences", c.Limits.MaxSequences, "max prompts × n of one request; 400 above")
	fs.IntVar(&c.Limits.MaxTokens, "max-request-tokens", c.Limits.MaxTokens, "max total max_tokens over all sequences of one request; 400 above")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "max open HTTP connections (idle keep-alives count); above it a new connection gets 503 with Retry-After")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: govllm serve [MODEL] [flags]\n\n"+
			"Serve MODEL (GGUF file, Hugging Face directory, or llama2.c checkpoint with --tokenizer)\n"+
			"over an OpenAI-compatible API: /v1/completions, /v1/chat/completions, /v1/models,\n"+
			"/tokenize, /detokenize, /health, /ping, /version, /metrics.\n"+
			"Without MODEL (or with --load-format dummy) a built-in random-weight model is served.\n\nFlags:\n")
		printDefaults(fs)
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c.Model, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && c.Model == "":
		c.Model = rest[0]
	case len(rest) > 0:
		fmt.Fprintf(stderr, "govllm serve: unexpected arguments %q\n", rest)
		return c, errUsage
	}
	n, err := parseBytes(kvMem)
	if err != nil {
		return c, fmt.Errorf("--kv-cache-memory: %w", err)
	}
	c.KVCacheMemory = n
	c.ServedModelNames = names
	if c.APIKey == "" {
		c.APIKey = os.Getenv("GOVLLM_API_KEY")
	}
	return c, nil
}

// parseBytes reads "123", "512MiB", "2GiB", "1.5GB", "64k" (binary for
// KiB/MiB/GiB/TiB and bare K/M/G/T, decimal for KB/MB/GB/TB).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("invalid size unit in %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	v := f * mult
	if v < 1 || v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q out of range", s)
	}
	return int64(v), nil
}

// runServe is `govllm serve`.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeArgs(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	_, envSet := os.LookupEnv("GOMAXPROCS")
	prev := runtime.GOMAXPROCS(0)
	if n := serveProcs(cfg.Threads, cfg.SpareProcs, prev, envSet); n != prev {
		runtime.GOMAXPROCS(n)
		defer runtime.GOMAXPROCS(prev)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return err
	}
	return serve(ctx, ln, cfg, logger)
}

// serveProcs is the GOMAXPROCS serve runs with: threads + spare Go
// processors, so that the forward pass (which keeps threads processors busy
// from the first kernel of a step to the last) always leaves one to the
// HTTP server; otherwise a request's goroutine waits for the runtime's
// 10 ms preemption tick. A $GOMAXPROCS set by the user (envSet) and a
// default already large enough are kept.
func serveProcs(threads, spare, current int, envSet bool) int {
	if envSet || spare <= 0 {
		return current
	}
	return max(current, max(threads, 1)+spare)
}

// serveStack is the whole server wired from a serveConfig, not yet
// listening: Handler is what http.Server serves.
type serveStack struct {
	Handler   http.Handler
	Engine    *llm.AsyncEngine
	Registry  *prometheus.Registry
	Config    serveConfig // with defaults resolved (names, max-model-len)
	NumBlocks int

	pool      *tensor.Pool
	stopLog   context.CancelFunc
	logDone   chan struct{}
	closeOnce sync.Once
}

// newServeStack loads the model and tokenizer, sizes the KV cache and wires
// runner → core → AsyncEngine (+ metrics loggers) → httpapi.
func newServeStack(cfg serveConfig, logger *slog.Logger) (st *serveStack, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.EngineNice < 0 || cfg.EngineNice > 19 {
		return nil, fmt.Errorf("--engine-nice must be in 0–19, got %d", cfg.EngineNice)
	}
	m, tok, err := loadModel(cfg)
	if err != nil {
		return nil, err
	}
	mc := m.Config
	if tok.VocabSize() != mc.VocabSize {
		logger.Warn("tokenizer and model vocabulary sizes differ", "tokenizer", tok.VocabSize(), "model", mc.VocabSize)
	}
	if len(cfg.ServedModelNames) == 0 {
		name := cfg.Model
		if name == "" || cfg.LoadFormat == "dummy" {
			name = dummyModelName
		}
		cfg.ServedModelNames = []string{name}
	}
	if cfg.MaxModelLen <= 0 {
		cfg.MaxModelLen = mc.MaxSeqLen
	}
	if cfg.MaxModelLen > mc.MaxSeqLen && mc.MaxSeqLen > 0 {
		return nil, fmt.Errorf("--max-model-len %d exceeds the model's context length %d", cfg.MaxModelLen, mc.MaxSeqLen)
	}
	policy, err := sched.ParsePolicy(cfg.SchedulingPolicy)
	if err != nil {
		return nil, fmt.Errorf("--scheduling-policy: %w", err)
	}
	if cfg.BlockSize < 1 {
		return nil, fmt.Errorf("--block-size must be positive, got %d", cfg.BlockSize)
	}
	numBlocks, err := kvBlocks(cfg, mc)
	if err != nil {
		return nil, err
	}
	defaults, err := loadGenerationConfig(cfg)
	if err != nil {
		return nil, err
	}
	chatTemplate := ""
	if cfg.ChatTemplate != "" {
		b, err := os.ReadFile(cfg.ChatTemplate)
		if err != nil {
			return nil, fmt.Errorf("--chat-template: %w", err)
		}
		chatTemplate = string(b)
	}

	pool, perr := tensor.NewPoolWith(cfg.Threads, tensor.PoolOptions{Nice: cfg.EngineNice})
	switch {
	case errors.Is(perr, tensor.ErrNiceUnsupported):
		logger.Info("the forward pass runs at normal priority", "engine_nice", cfg.EngineNice, "reason", perr)
	case perr != nil:
		logger.Warn("the forward pass runs at normal priority", "engine_nice", cfg.EngineNice, "err", perr)
	}
	st = &serveStack{Config: cfg, NumBlocks: numBlocks, pool: pool}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	run, err := runner.New(m, st.pool, runner.Config{
		NumBlocks: numBlocks, BlockSize: cfg.BlockSize,
		MaxNumBatchedTokens: cfg.MaxNumBatchedTokens, MaxNumSeqs: cfg.MaxNumSeqs,
		EOSTokenID: tok.EOS(), Seed: cfg.Seed,
	})
	if err != nil {
		return nil, err
	}
	coreCfg := core.Config{
		Sched: sched.Config{
			MaxNumSeqs: cfg.MaxNumSeqs, MaxNumBatchedTokens: cfg.MaxNumBatchedTokens, MaxModelLen: cfg.MaxModelLen,
			Policy: policy, EnableChunkedPrefill: true,
		},
		KV: kvcache.Config{NumBlocks: numBlocks, BlockSize: cfg.BlockSize, EnablePrefixCaching: cfg.EnablePrefixCaching},
	}
	var exec core.Executor = run
	if cfg.wrapExecutor != nil {
		exec = cfg.wrapExecutor(exec)
	}
	eng, err := core.New(coreCfg, exec)
	if err != nil {
		return nil, err
	}

	st.Registry = metrics.NewRegistry()
	var loggers []llm.StatLogger
	if !cfg.DisableLogStats {
		prom, err := metrics.NewPrometheus(st.Registry, metrics.PrometheusOptions{
			ModelName: cfg.ServedModelNames[0], MaxModelLen: cfg.MaxModelLen,
			CacheConfig: map[string]string{
				"block_size":            strconv.Itoa(cfg.BlockSize),
				"num_gpu_blocks":        strconv.Itoa(numBlocks),
				"enable_prefix_caching": strconv.FormatBool(cfg.EnablePrefixCaching),
				"cache_dtype":           "auto",
			},
		})
		if err != nil {
			return nil, err
		}
		logLine := metrics.NewLogging(logger, cfg.LogStatsInterval)
		ctx, cancel := context.WithCancel(context.Background())
		st.stopLog, st.logDone = cancel, make(chan struct{})
		go func() {
			defer close(st.logDone)
			logLine.Run(ctx)
		}()
		loggers = append(loggers, prom, logLine)
	}
	httpMetrics, err := metrics.NewHTTP(st.Registry)
	if err != nil {
		return nil, err
	}
	st.Engine, err = llm.NewAsyncEngine(llm.Config{MaxModelLen: cfg.MaxModelLen, Limits: cfg.Limits}, eng, tok, loggers...)
	if err != nil {
		return nil, err
	}
	go logEngineDeath(st.Engine, logger)
	srv, err := httpapi.New(httpapi.Config{
		ServedModelNames:   cfg.ServedModelNames,
		APIKey:             cfg.APIKey,
		ChatTemplate:       chatTemplate,
		DefaultParams:      defaults,
		Metrics:            metrics.Handler(st.Registry),
		Instrument:         httpMetrics.Middleware,
		Logger:             logger,
		DisableLogRequests: cfg.DisableLogRequests,
		Version:            version(),
	}, st.Engine)
	if err != nil {
		return nil, err
	}
	st.Handler = srv

	logger.Info("model loaded", "model", modelLabel(cfg), "served_model_name", strings.Join(cfg.ServedModelNames, ","),
		"dim", mc.Dim, "layers", mc.NumLayers, "heads", mc.NumHeads, "kv_heads", mc.NumKVHeads, "vocab", mc.VocabSize,
		"params", mc.NumParams(), "max_model_len", cfg.MaxModelLen)
	logger.Info("KV cache", "blocks", numBlocks, "block_size", cfg.BlockSize, "tokens", numBlocks*cfg.BlockSize,
		"bytes", int64(numBlocks)*int64(cfg.BlockSize)*int64(mc.KVBytesPerToken()), "prefix_caching", cfg.EnablePrefixCaching)
	logger.Info("engine", "threads", cfg.Threads, "engine_nice", cfg.EngineNice, "gomaxprocs", runtime.GOMAXPROCS(0), "max_num_seqs", cfg.MaxNumSeqs, "max_num_batched_tokens", cfg.MaxNumBatchedTokens,
		"scheduling_policy", policy.String(), "log_stats", !cfg.DisableLogStats)
	return st, nil
}

// logEngineDeath logs, once, why the engine died (with the stack of a
// panic); the HTTP server keeps answering, /health with 503.
func logEngineDeath(e *llm.AsyncEngine, logger *slog.Logger) {
	<-e.Done()
	err := e.Err()
	if err == nil || errors.Is(err, llm.ErrClosed) {
		return
	}
	var pe *core.PanicError
	if errors.As(err, &pe) {
		logger.Error("engine died; /health answers 503 and every request fails until the process is restarted", "err", err, "stack", string(pe.Stack))
		return
	}
	logger.Error("engine died; /health answers 503 and every request fails until the process is restarted", "err", err)
}

// Close stops the engine, the log line and the thread pool.
func (s *serveStack) Close() error {
	var err error
	s.closeOnce.Do(func() {
		if s.Engine != nil {
			err = s.Engine.Close()
		}
		if s.stopLog != nil {
			s.stopLog()
			<-s.logDone
		}
		if s.pool != nil {
			s.pool.Close()
		}
	})
	return err
}

// serve runs the server on ln until ctx is done, then stops accepting,
// lets in-flight requests finish for cfg.ShutdownGrace, closes the
// remaining connections (aborting their engine requests) and the engine.
func serve(ctx context.Context, ln net.Listener, cfg serveConfig, logger *slog.Logger) error {
	st, err := newServeStack(cfg, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer st.Close()
	srv := &http.Server{
		Handler:           st.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// No WriteTimeout: SSE streams last as long as generation does.
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(httpapi.LimitListener(ln, st.Config.MaxConnections)) }()
	logger.Info("serving", "url", serveURL(ln.Addr()), "listen", ln.Addr().String(), "version", version())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", st.Config.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), st.Config.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("grace period over; closing open connections", "err", err)
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	died := st.Engine.Err() // before Close, which sets ErrClosed on a live engine
	if err := st.Close(); err != nil {
		return err
	}
	if died != nil {
		return fmt.Errorf("the engine had died: %w", died) // exit status 1
	}
	logger.Info("stopped")
	return nil
}

// serveURL is a URL a local client can use: an unspecified listen address
// (all interfaces) is shown as 127.0.0.1.
func serveURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// quantizationUsage is the --quantization help of serve and generate.
const quantizationUsage = "quantize F32 weights at load (the dummy model's matrices too): q8_0 or q4_0 (default: keep the file's types; Q4_0 files stay Q4_0)"

// quantDType returns the weight type of a --quantization value (F32 for
// none).
func quantDType(q string) (tensor.DType, error) {
	switch q {
	case "":
		return tensor.F32, nil
	case "q8_0":
		return tensor.Q8_0, nil
	case "q4_0":
		return tensor.Q4_0, nil
	}
	return tensor.F32, fmt.Errorf("--quantization must be q8_0 or q4_0, got %q", q)
}

// loadModel returns the model and tokenizer per --load-format.
func loadModel(cfg serveConfig) (*model.Model, *tokenizer.Tokenizer, error) {
	switch cfg.LoadFormat {
	case "dummy":
		if cfg.Model != "" {
			return nil, nil, fmt.Errorf("--load-format dummy serves the built-in random model of --dummy-shape; omit MODEL")
		}
	case "auto":
	default:
		return nil, nil, fmt.Errorf("--load-format must be auto or dummy, got %q", cfg.LoadFormat)
	}
	dtype, err := quantDType(cfg.Quantization)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Model == "" {
		mc, err := model.DummyConfig(cfg.DummyShape)
		if err != nil {
			return nil, nil, fmt.Errorf("--dummy-shape: %w", err)
		}
		return model.NewDummy(mc, dtype, cfg.Seed), tokenizer.NewDummy(mc.VocabSize), nil
	}
	m, err := model.Load(cfg.Model, model.LoadOptions{Quantize: cfg.Quantization})
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.Load(cfg.Model, tokenizer.LoadOptions{TokenizerPath: cfg.Tokenizer})
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer: %w (a llama2.c checkpoint needs --tokenizer tok512.bin)", err)
	}
	return m, tok, nil
}

// kvBlocks sizes the KV cache: --num-gpu-blocks-override, else
// --kv-cache-memory ÷ (KV bytes per token × block size), capped at what
// max-num-seqs full-length sequences can use; at least one full-length
// sequence must fit.
func kvBlocks(cfg serveConfig, mc model.Config) (int, error) {
	perSeq := (cfg.MaxModelLen + cfg.BlockSize - 1) / cfg.BlockSize
	n := cfg.NumGPUBlocksOverride
	if n <= 0 {
		n = kvcache.NumBlocksForMemory(int(min(cfg.KVCacheMemory, math.MaxInt)), mc.KVBytesPerToken(), cfg.BlockSize)
		n = min(n, perSeq*cfg.MaxNumSeqs)
	}
	if n < perSeq {
		return 0, fmt.Errorf("the KV cache holds %d blocks of %d tokens (%d tokens), less than one sequence of --max-model-len %d: raise --kv-cache-memory or lower --max-model-len",
			n, cfg.BlockSize, n*cfg.BlockSize, cfg.MaxModelLen)
	}
	return n, nil
}

// loadGenerationConfig returns the default sampling parameters: vLLM's
// built-ins overlaid with generation_config.json's temperature, top_p,
// top_k, min_p and repetition_penalty ("auto": MODEL's file when present;
// "vllm": built-ins only; else a file or directory path).
func loadGenerationConfig(cfg serveConfig) (*sampling.Params, error) {
	p := sampling.Default()
	var path string
	switch cfg.GenerationConfig {
	case "vllm", "":
		return &p, nil
	case "auto":
		if cfg.Model == "" {
			return &p, nil
		}
		dir := cfg.Model
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
		path = filepath.Join(dir, "generation_config.json")
		if _, err := os.Stat(path); err != nil {
			return &p, nil
		}
	default:
		path = cfg.GenerationConfig
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, "generation_config.json")
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--generation-config: %w", err)
	}
	var g struct {
		Temperature       *float32 `json:"temperature"`
		TopP              *float32 `json:"top_p"`
		TopK              *int     `json:"top_k"`
		MinP              *float32 `json:"min_p"`
		RepetitionPenalty *float32 `json:"repetition_penalty"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("--generation-config %s: %w", path, err)
	}
	set := func(dst *float32, v *float32) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.Temperature, g.Temperature)
	set(&p.TopP, g.TopP)
	set(&p.MinP, g.MinP)
	set(&p.RepetitionPenalty, g.RepetitionPenalty)
	if g.TopK != nil {
		p.TopK = *g.TopK
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("--generation-config %s: %w", path, err)
	}
	return &p, nil
}

func modelLabel(cfg serveConfig) string {
	if cfg.Model == "" {
		return "dummy:" + cfg.DummyShape
	}
	return cfg.Model
}

// version is the module version of the binary ("dev" in a source build).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
