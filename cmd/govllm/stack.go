package main

import (
	"context"
	"errors"
	"fmt"
	"govllm/internal/core"
	"govllm/internal/httpapi"
	"govllm/internal/llm"
	"govllm/internal/metrics"
	"govllm/internal/webui"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// serveStack is the whole server wired from a serveConfig, not yet
// listening: Handler is what http.Server serves.
type serveStack struct {
	Handler   http.Handler
	API       *httpapi.Server // Handler's server (Drain)
	Engine    *llm.AsyncEngine
	Registry  *prometheus.Registry
	Config    serveConfig // with defaults resolved (names, max-model-len)
	NumBlocks int

	parts     *engineParts
	stopLog   context.CancelFunc
	logDone   chan struct{}
	closeOnce sync.Once
}

// newServeStack builds the engine (buildEngine), then wires the stat
// loggers, the AsyncEngine and the HTTP server over it.
func newServeStack(cfg serveConfig, logger *slog.Logger) (st *serveStack, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger.Info("non-default args", nonDefaultArgs(cfg, defaultServeConfig())...)
	if len(cfg.compat) > 0 {
		logger.Warn("vLLM flags accepted with no effect on this backend", "flags", strings.Join(cfg.compat, " "))
	}
	defaults, err := loadGenerationConfig(cfg)
	if err != nil {
		return nil, err
	}
	chatTemplate, err := readChatTemplate(cfg.ChatTemplate)
	if err != nil {
		return nil, err
	}
	runner, err := cfg.apiRunner()
	if err != nil {
		return nil, err
	}
	parts, err := buildEngine(cfg.engineConfig, logger, cfg.wrapExecutor)
	if err != nil {
		return nil, err
	}
	rc := parts.Config
	cfg.engineConfig = rc.engineConfig
	if len(cfg.ServedModelNames) == 0 {
		cfg.ServedModelNames = []string{dummyModelName}
		if cfg.Model != "" {
			cfg.ServedModelNames[0] = cfg.Model
		}
	}
	st = &serveStack{Config: cfg, NumBlocks: rc.NumBlocks, parts: parts, Registry: metrics.NewRegistry()}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	loggers, err := st.statLoggers(logger, &rc)
	if err != nil {
		return nil, err
	}
	httpMetrics, err := metrics.NewHTTP(st.Registry)
	if err != nil {
		return nil, err
	}
	lc := rc.LLM()
	lc.RequestStats = cfg.ResponseTimings
	if st.Engine, err = llm.NewAsyncEngine(lc, parts.Core, parts.Tok, loggers...); err != nil {
		return nil, err
	}
	go logEngineDeath(st.Engine, logger)
	st.API, err = httpapi.New(httpapi.Config{
		ServedModelNames:     cfg.ServedModelNames,
		APIKeys:              cfg.APIKey,
		ChatTemplate:         chatTemplate,
		DefaultParams:        defaults,
		Metrics:              metrics.Handler(st.Registry),
		Instrument:           httpMetrics.Middleware,
		Logger:               logger,
		DisableLogRequests:   cfg.DisableLogRequests,
		Version:              version(),
		AllowUnknownFields:   cfg.AllowUnknownFields,
		EnableAutoToolChoice: cfg.EnableAutoToolChoice,
		ToolCallParser:       cfg.ToolCallParser,
		ReasoningParser:      cfg.ReasoningParser,
		CORS:                 &cfg.CORS,
		Pooler:               &cfg.Pooler,
		Runner:               runner,
		ResponseTimings:      cfg.ResponseTimings,
		ResponsesStoreSize:   responsesStoreSize(cfg.ResponsesStoreSize),
		UI:                   uiHandler(cfg.DisableUI),
	}, st.Engine)
	if err != nil {
		return nil, err
	}
	st.Handler = st.API
	for _, r := range st.API.Routes() {
		httpMetrics.Precreate(r[0], r[1])
	}
	logStack(logger, &cfg, &rc)
	return st, nil
}

// uiHandler is the page at / (package webui), or nil with --disable-ui.
func uiHandler(disabled bool) http.Handler {
	if disabled {
		return nil
	}
	return webui.Handler()
}

// statLoggers returns the Prometheus and log-line stat loggers (none with
// --disable-log-stats) and starts the log line's ticker.
func (st *serveStack) statLoggers(logger *slog.Logger, rc *resolvedConfig) ([]llm.StatLogger, error) {
	if st.Config.DisableLogStats {
		return nil, nil
	}
	prom, err := metrics.NewPrometheus(st.Registry, metrics.PrometheusOptions{
		ModelName: st.Config.ServedModelNames[0], MaxModelLen: rc.MaxModelLen, CacheConfig: rc.CacheConfigInfo(),
		NumSpeculativeTokens: rc.NumSpeculativeTokens(),
	})
	if err != nil {
		return nil, err
	}
	logLine := metrics.NewLogging(logger, st.Config.LogStatsInterval)
	ctx, cancel := context.WithCancel(context.Background())
	st.stopLog, st.logDone = cancel, make(chan struct{})
	go func() {
		defer close(st.logDone)
		logLine.Run(ctx)
	}()
	return []llm.StatLogger{prom, logLine}, nil
}

// logStack logs what was loaded and how the engine is configured.
func logStack(logger *slog.Logger, cfg *serveConfig, rc *resolvedConfig) {
	mc := rc.ModelCfg
	logger.Info("model loaded", "model", modelLabel(cfg.engineConfig), "served_model_name", strings.Join(cfg.ServedModelNames, ","),
		"dim", mc.Dim, "layers", mc.NumLayers, "heads", mc.NumHeads, "kv_heads", mc.NumKVHeads, "vocab", mc.VocabSize,
		"params", mc.NumParams(), "max_model_len", rc.MaxModelLen)
	logger.Info("KV cache", "blocks", rc.NumBlocks, "block_size", rc.BlockSize, "tokens", rc.NumBlocks*rc.BlockSize,
		"bytes", int64(rc.NumBlocks)*int64(rc.BlockSize)*int64(mc.KVBytesPerToken(rc.KVCodec)), "kv_cache_dtype", rc.KVCodec.Name, "prefix_caching", rc.EnablePrefixCaching)
	logger.Info("engine", "threads", rc.Threads, "engine_nice", rc.EngineNice, "gomaxprocs", runtime.GOMAXPROCS(0), "max_num_seqs", rc.MaxNumSeqs, "max_num_batched_tokens", rc.MaxNumBatchedTokens,
		"scheduling_policy", rc.Policy.String(), "log_stats", !cfg.DisableLogStats)
}

// readChatTemplate reads --chat-template ("" when none).
func readChatTemplate(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--chat-template: %w", err)
	}
	return string(b), nil
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
		if s.parts != nil {
			s.parts.Close()
		}
	})
	return err
}

// responsesStoreSize maps --responses-store-size (0 keeps none) to
// httpapi.Config's (0 is the default size, < 0 keeps none).
func responsesStoreSize(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
