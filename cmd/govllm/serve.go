package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"govllm/internal/core"
	"govllm/internal/httpapi"
	"govllm/internal/metrics"
	"govllm/internal/pooling"
	"govllm/internal/reasoning"
	"govllm/internal/toolparser"
)

// serveConfig is everything `govllm serve` is configured with: the engine
// (engineConfig, shared with generate) and the server's own settings
// (vLLM's flag names). Tests build one with defaultServeConfig and call
// serve or newServeStack directly.
type serveConfig struct {
	engineConfig
	Host               string   // listen host ("" = all interfaces)
	Port               int      // listen port
	ServedModelNames   []string // default: Model, or "govllm-dummy"
	APIKey             []string // vLLM's api_key: each is accepted
	DisableLogStats    bool
	DisableLogRequests bool
	ChatTemplate       string // file
	GenerationConfig   string // "auto", "vllm", or a path
	// SpareProcs is how many Go processors beyond Threads the server keeps
	// for its HTTP goroutines (GOMAXPROCS = Threads + SpareProcs, unless
	// $GOMAXPROCS is set or the default is already larger).
	SpareProcs       int
	LogStatsInterval time.Duration
	// ShutdownTimeout is how long in-flight generation requests may run
	// after a signal (vLLM's --shutdown-timeout, default 0); those still
	// running then end with an error (an SSE error event and [DONE]).
	ShutdownTimeout time.Duration
	// MaxConnections caps open HTTP connections (503 above).
	MaxConnections int
	// AllowUnknownFields accepts unknown request fields (logged once each).
	AllowUnknownFields bool
	// DisableUI leaves the page at / unserved (--disable-ui).
	DisableUI bool
	// Tool calls and reasoning (vLLM's flags; see httpapi.Config).
	EnableAutoToolChoice bool
	ToolCallParser       string
	ReasoningParser      string
	// CORS is vLLM's --allowed-origins, --allowed-methods,
	// --allowed-headers and --allow-credentials.
	httpapi.CORS
	// Pooler is the pooling of /v1/embeddings (vLLM's --pooler-config).
	Pooler pooling.Params
	// ResponseTimings adds per-request timings to responses
	// (--enable-response-timings).
	ResponseTimings bool
	// Runner and Convert are vLLM's --runner (auto, generate, pooling)
	// and --convert (auto, none, embed): which APIs are served.
	Runner, Convert string
	// ResponsesStoreSize is how many Responses API responses are kept
	// (--responses-store-size; 0 keeps none).
	ResponsesStoreSize int

	// LogLevel is the server log's level (--uvicorn-log-level).
	LogLevel slog.Level

	// compat lists the vLLM-only flags given whose values are no-ops here
	// ("--dtype auto"), for one start-up warning.
	compat []string

	// wrapExecutor, when set, wraps the runner the core executes (tests
	// inject faults with it; no flag reaches it).
	wrapExecutor func(core.Executor) core.Executor
}

const dummyModelName = "govllm-dummy"

// defaultEngineNice is serve's --engine-nice default (see
// docs/performance.md, "/metrics scrape latency under load").
const defaultEngineNice = 10

func defaultServeConfig() serveConfig {
	e := defaultEngineConfig()
	e.EngineNice = defaultEngineNice
	return serveConfig{
		engineConfig:       e,
		Port:               8000,
		GenerationConfig:   "auto",
		SpareProcs:         1,
		LogStatsInterval:   metrics.DefaultLogInterval,
		MaxConnections:     httpapi.DefaultMaxConnections,
		CORS:               httpapi.DefaultCORS(),
		Pooler:             pooling.Default(),
		Runner:             "auto",
		Convert:            "auto",
		ResponsesStoreSize: httpapi.DefaultResponsesStoreSize,
	}
}

// parseServeArgs parses `govllm serve [MODEL] [flags]` as vLLM's argparse
// parses `vllm serve` (parseGNU). Without --api-key the keys come from
// $GOVLLM_API_KEY and $VLLM_API_KEY.
func parseServeArgs(args []string, stderr io.Writer) (serveConfig, error) {
	c := defaultServeConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names, keys stringList
	var model string
	finish := c.addFlags(fs, &names, &keys, &model)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: govllm serve [MODEL] [flags]\n\n"+
			"Serve MODEL (GGUF file, Hugging Face directory, or llama2.c checkpoint with --tokenizer)\n"+
			"over an OpenAI-compatible API: /v1/completions, /v1/chat/completions, /v1/embeddings, /v1/models,\n"+
			"/tokenize, /detokenize, /health, /ping, /version, /metrics.\n"+
			"Without MODEL (or with --load-format dummy) a built-in random-weight model is served.\n"+
			"Flags are read as vLLM reads them: --x=y or --x y, --max_model_len, -tp 1, several\n"+
			"values after --served-model-name and --api-key.\n")
		printGroups(fs, serveFlagGroups)
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		c.Model, args = args[0], args[1:]
	}
	var given []string
	if c.Model != "" {
		given = append(given, "model")
	}
	args, err := expandConfig(fs, args, given...)
	if err != nil {
		return c, err
	}
	rest, err := parseGNU(fs, args, "served-model-name", "api-key")
	if err != nil {
		return c, err
	}
	if len(rest) == 1 && c.Model == "" {
		c.Model, rest = rest[0], nil
	}
	switch {
	case len(rest) > 0:
		fmt.Fprintf(stderr, "govllm serve: unexpected arguments %q\n", rest)
		return c, errUsage
	case model != "" && c.Model != "" && model != c.Model:
		return c, fmt.Errorf("the model is given twice: %q and --model %q", c.Model, model)
	case model != "":
		c.Model = model
	}
	if err := finish(); err != nil {
		return c, err
	}
	if _, err := c.apiRunner(); err != nil {
		return c, err
	}
	c.ServedModelNames, c.APIKey = names, keys
	if len(c.APIKey) == 0 {
		for _, env := range []string{"GOVLLM_API_KEY", "VLLM_API_KEY"} {
			if k := os.Getenv(env); k != "" {
				c.APIKey = append(c.APIKey, k)
			}
		}
	}
	return c, nil
}

// serveFlagGroups are serve's --help groups, vLLM's (the config class
// each flag belongs to there), then govllm's own flags. A name serve
// does not define (yet) is skipped.
var serveFlagGroups = []flagGroup{
	{"Options", []string{"config", "model"}},
	{"Frontend", []string{"host", "port", "uvicorn-log-level", "api-key", "chat-template", "enable-log-requests", "disable-log-requests", "max-connections", "shutdown-timeout", "allow-unknown-fields", "enable-response-timings", "enable-auto-tool-choice", "tool-call-parser",
		"allowed-origins", "allowed-methods", "allowed-headers", "allow-credentials", "no-allow-credentials"}},
	{"StructuredOutputsConfig", []string{"reasoning-parser"}},
	{"ModelConfig", []string{"tokenizer", "served-model-name", "runner", "convert", "pooler-config", "max-model-len", "dtype", "seed", "quantization", "generation-config", "trust-remote-code", "enforce-eager", "max-logprobs"}},
	{"LoadConfig", []string{"load-format"}},
	{"ParallelConfig", []string{"tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size", "disable-custom-all-reduce"}},
	{"CacheConfig", []string{"block-size", "enable-prefix-caching", "no-enable-prefix-caching", "num-gpu-blocks-override", "gpu-memory-utilization", "kv-cache-dtype", "swap-space", "cpu-offload-gb"}},
	{"SchedulerConfig", []string{"max-num-seqs", "max-num-batched-tokens", "scheduling-policy"}},
	{"ObservabilityConfig", []string{"disable-log-stats", "log-stats-interval"}},
	{"VllmConfig", []string{"speculative-config"}},
	{"govllm (CPU backend)", []string{"kv-cache-memory", "dummy-shape", "threads", "engine-nice", "spare-procs", "max-request-n", "max-request-sequences", "max-request-tokens", "responses-store-size"}},
	{"govllm web UI", []string{"disable-ui"}},
}

// addFlags registers serve's flags on fs: the engine's, the server's, and
// vLLM's GPU-only ones (compatFlags). The model names, API keys and
// --model go to names, keys and model; finish is the engine's.
func (c *serveConfig) addFlags(fs *flag.FlagSet, names, keys *stringList, model *string) (finish func() error) {
	fs.String("config", "", "a YAML `file` of flags (vLLM's --config): name: value, lists for several values; the command line overrides it")
	fs.StringVar(model, "model", "", "the model, as the MODEL argument (vLLM's --model)")
	fs.StringVar(&c.Host, "host", c.Host, "listen host (default: all interfaces)")
	fs.IntVar(&c.Port, "port", c.Port, "listen port")
	fs.Var(names, "served-model-name", "model name(s) the API accepts and reports; several after the flag, repeated or comma-separated (default: MODEL, or "+dummyModelName+")")
	fs.Var(keys, "api-key", "require 'Authorization: Bearer KEY' on /v1/*; several keys are each accepted (default: $GOVLLM_API_KEY, $VLLM_API_KEY)")
	finish = c.engineConfig.addFlags(fs)
	fs.BoolVar(&c.DisableLogStats, "disable-log-stats", false, "no engine statistics: no vllm:* metrics and no periodic log line")
	fs.BoolVar(&c.DisableLogRequests, "disable-log-requests", false, "do not log each request")
	fs.BoolFunc("enable-log-requests", "log each request (the default here; vLLM's spelling)", setBool(&c.DisableLogRequests, true))
	fs.StringVar(&c.ChatTemplate, "chat-template", "", "chat template file (Jinja), overriding the model's")
	fs.StringVar(&c.GenerationConfig, "generation-config", c.GenerationConfig, "default sampling parameters: 'auto' (MODEL's generation_config.json), 'vllm' (built-in defaults) or a path")
	fs.IntVar(&c.SpareProcs, "spare-procs", c.SpareProcs, "Go processors kept for the HTTP server beyond --threads: GOMAXPROCS = threads + N\n(unless $GOMAXPROCS is set or larger already), so a request never waits for the forward pass\nto yield one")
	fs.DurationVar(&c.LogStatsInterval, "log-stats-interval", c.LogStatsInterval, "interval of the statistics log line")
	fs.Func("shutdown-timeout", "on SIGTERM/SIGINT, how long in-flight requests may finish (seconds, or a duration such as 90s)\nbefore the rest end with an error event; new ones get 503 meanwhile (default 0: end them at once)", func(v string) error {
		d, err := parseSeconds(v)
		c.ShutdownTimeout = d
		return err
	})
	fs.Func("uvicorn-log-level", "server log level: critical, error, warning, info, debug or trace (vLLM's flag; default info)", func(v string) error {
		l, ok := logLevels[v]
		c.LogLevel = l
		if !ok {
			return fmt.Errorf("unknown log level %q (critical, error, warning, info, debug or trace)", v)
		}
		return nil
	})
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "max open HTTP connections (idle keep-alives count); above it a new connection gets 503 with Retry-After")
	fs.BoolVar(&c.DisableUI, "disable-ui", false, "do not serve the chat playground and metrics dashboard at / (then a 404)")
	fs.BoolVar(&c.AllowUnknownFields, "allow-unknown-fields", false, "accept request fields that are neither OpenAI's nor vLLM's (each name logged once) instead of answering 400")
	fs.BoolVar(&c.EnableAutoToolChoice, "enable-auto-tool-choice", false, "parse tool calls out of the output for tool_choice \"auto\" (needs --tool-call-parser)")
	fs.Func("tool-call-parser", "the model's tool-call format: "+strings.Join(toolparser.Names(), ", "), func(v string) error {
		if !slices.Contains(toolparser.Names(), v) {
			return fmt.Errorf("unknown tool call parser %q (known: %s)", v, strings.Join(toolparser.Names(), ", "))
		}
		c.ToolCallParser = v
		return nil
	})
	fs.Func("reasoning-parser", "split reasoning_content off chat answers: "+strings.Join(reasoning.Names(), ", "), func(v string) error {
		if !slices.Contains(reasoning.Names(), v) {
			return fmt.Errorf("unknown reasoning parser %q (known: %s)", v, strings.Join(reasoning.Names(), ", "))
		}
		c.ReasoningParser = v
		return nil
	})
	c.addCORSFlags(fs)
	fs.Func("pooler-config", `pooling of /v1/embeddings, vLLM's PoolerConfig JSON: {"pooling_type": "LAST"|"MEAN"|"CLS", "normalize": true|false} (default LAST, normalized: vLLM's for a decoder model)`,
		func(v string) error {
			p, err := pooling.ParseConfig(v, c.Pooler)
			c.Pooler = p
			return err
		})
	fs.BoolVar(&c.ResponseTimings, "enable-response-timings", false, "add a timings object beside usage in completion, chat and embeddings responses (a stream: on its usage chunk):\nqueue, prefill, decode, inference, TTFT, e2e, mean inter-token latency (the values of the vllm:* histograms), tokens/s, prefix-cache hits")
	fs.Func("runner", "auto (the default: generation and embeddings), generate (no /v1/embeddings) or pooling (only /v1/embeddings), as vLLM's --runner",
		oneOfInto(&c.Runner, "auto", "generate", "pooling"))
	fs.Func("convert", "auto (the default), none, or embed (serve the model for embeddings only, as --runner pooling), as vLLM's --convert",
		oneOfInto(&c.Convert, "auto", "none", "embed"))
	fs.Func("responses-store-size", fmt.Sprintf("how many /v1/responses responses are kept in memory for previous_response_id and GET /v1/responses/{id}, least recently used evicted first; 0 keeps none (default %d)", httpapi.DefaultResponsesStoreSize), func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("must be a non-negative integer, got %q", v)
		}
		c.ResponsesStoreSize = n
		return nil
	})
	addCompatFlags(fs, &c.compat)
	return finish
}

// oneOfInto is the Set of a flag that takes one of values into *dst.
func oneOfInto(dst *string, values ...string) func(string) error {
	check := oneOf(values...)
	return func(v string) error {
		if err := check(v); err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// apiRunner resolves --runner and --convert to httpapi.Config.Runner, as
// vLLM does: --convert embed makes the auto runner pooling, and cannot be
// combined with --runner generate.
func (c *serveConfig) apiRunner() (string, error) {
	switch {
	case c.Convert == "embed" && c.Runner == "generate":
		return "", errors.New("--convert embed converts the model for pooling: it cannot run with --runner generate")
	case c.Convert == "embed" || c.Runner == "pooling":
		return httpapi.RunnerPooling, nil
	case c.Runner == "generate":
		return httpapi.RunnerGenerate, nil
	}
	return "", nil // auto: both
}

// addCORSFlags registers vLLM's CORS flags. As in vLLM, the three lists
// are each one JSON array ('["https://a.example"]'), not several values.
func (c *serveConfig) addCORSFlags(fs *flag.FlagSet) {
	fs.Func("allowed-origins", `CORS: allowed origins, a JSON list (default ["*"])`, jsonList(&c.AllowedOrigins))
	fs.Func("allowed-methods", `CORS: allowed methods, a JSON list (default ["*"]: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT)`, jsonList(&c.AllowedMethods))
	fs.Func("allowed-headers", `CORS: allowed request headers, a JSON list (default ["*"])`, jsonList(&c.AllowedHeaders))
	fs.BoolFunc("allow-credentials", "CORS: allow credentials (Access-Control-Allow-Credentials: true)", setBool(&c.AllowCredentials, false))
	fs.BoolFunc("no-allow-credentials", "CORS: no credentials (the default)", setBool(&c.AllowCredentials, true))
}

// jsonList is the Set of a flag whose value is a JSON array of strings
// (vLLM reads these flags with json.loads).
func jsonList(dst *[]string) func(string) error {
	return func(v string) error {
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil || list == nil {
			return fmt.Errorf("want a JSON list of strings such as '[\"*\"]', got %q", v)
		}
		*dst = list
		return nil
	}
}

// logLevels are --uvicorn-log-level's values (uvicorn's names; critical
// and trace have no slog level of their own).
var logLevels = map[string]slog.Level{
	"critical": slog.LevelError, "error": slog.LevelError, "warning": slog.LevelWarn,
	"info": slog.LevelInfo, "debug": slog.LevelDebug, "trace": slog.LevelDebug,
}

// runServe is `govllm serve`.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeArgs(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
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

// serve runs the server on ln until ctx is done, then drains: new
// generation requests get 503 and /health 503 while those in flight finish
// for up to cfg.ShutdownTimeout; the rest end with an error event. Then
// the connections close (after finishTimeout at most) and the engine stops.
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
	shutdown(srv, st, logger)
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

// finishTimeout bounds how long, after the drain, the handlers of ended
// requests have to write their error event before connections are closed.
const finishTimeout = 5 * time.Second

// shutdown drains st's server (the listener stays open meanwhile, so a
// balancer sees /health turn 503), then closes srv.
func shutdown(srv *http.Server, st *serveStack, logger *slog.Logger) {
	logger.Info("draining: new generation requests get 503 and /health 503", "shutdown_timeout", st.Config.ShutdownTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), st.Config.ShutdownTimeout)
	defer cancel()
	if err := st.API.Drain(dctx); err != nil {
		logger.Warn("shutdown timeout over: the requests still running end with an error event")
	}
	sctx, cancel2 := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel2()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("closing connections still open", "err", err)
		srv.Close()
	}
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

// version is the module version of the binary ("dev" in a source build).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
