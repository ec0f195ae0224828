package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"govllm/internal/bench"
)

// runBench dispatches `govllm bench <sub>`; only `serve` exists (vLLM's
// `vllm bench serve`).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(stdout, "Usage: govllm bench serve [flags]\n\nRun 'govllm bench serve --help' for the flags.")
			return nil
		}
		fmt.Fprintln(stderr, "Usage: govllm bench serve [flags]")
		return errUsage
	}
	return runBenchServe(ctx, args[1:], stdout, stderr)
}

// benchOutputs are the bench serve flags about what to do with the result.
type benchOutputs struct {
	saveResult          bool
	resultDir, fileName string
	plot                string
	verify              bool
}

func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, outs, err := parseBenchArgs(args, stderr)
	if err != nil {
		return err
	}
	rate := "inf"
	if !math.IsInf(cfg.RequestRate, 1) {
		rate = strconv.FormatFloat(cfg.RequestRate, 'g', -1, 64)
	}
	fmt.Fprintf(stderr, "benchmarking %s%s: %d prompts, input %d, output %d, rate %s, max concurrency %d\n",
		cfg.BaseURL, cfg.Endpoint, cfg.NumPrompts, cfg.RandomInputLen, cfg.RandomOutputLen, rate, cfg.MaxConcurrency)
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return reportBench(res, outs, stdout, stderr)
}

// parseBenchArgs turns `govllm bench serve` flags into a bench.Config.
func parseBenchArgs(args []string, stderr io.Writer) (bench.Config, benchOutputs, error) {
	fs := flag.NewFlagSet("govllm bench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg         bench.Config
		outs        benchOutputs
		host        = fs.String("host", "127.0.0.1", "server host (used when --base-url is empty)")
		port        = fs.Int("port", 8000, "server port (used when --base-url is empty)")
		rate        = fs.String("request-rate", "inf", "requests per second, or inf to send all at once")
		percentiles = fs.String("metric-percentiles", "50,90,99", "comma-separated percentiles to report")
		noCheck     = fs.Bool("no-metrics-check", false, "do not scrape /metrics (for servers without vLLM's metrics)")
		dataset     = fs.String("dataset-name", "random", "dataset: random (the only one; accepted for vLLM command lines)")
		backend     = fs.String("backend", "vllm", "vllm or openai (/v1/completions), openai-chat (/v1/chat/completions); sets the default --endpoint")
		disableBar  = fs.Bool("disable-tqdm", false, "no progress output")
	)
	fs.BoolVar(&outs.saveResult, "save-result", false, "save the result as JSON (see --result-dir, --result-filename)")
	fs.StringVar(&outs.resultDir, "result-dir", ".", "directory for --save-result")
	fs.StringVar(&outs.fileName, "result-filename", "", "file name for --save-result (default: govllm-<model>-<date>.json)")
	fs.StringVar(&outs.plot, "plot", "", "write a latency plot (SVG: TTFT and ITL over time) to this file")
	fs.BoolVar(&outs.verify, "verify-metrics", false, "exit non-zero when the server's /metrics disagrees with the client's measurements")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "server base URL, e.g. http://127.0.0.1:8000 (default from --host and --port)")
	fs.StringVar(&cfg.Endpoint, "endpoint", "/v1/completions", "API endpoint: /v1/completions or /v1/chat/completions")
	fs.StringVar(&cfg.Model, "model", "", "model name to request (default: the first model the server lists)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "API key sent as a bearer token (default $OPENAI_API_KEY)")
	fs.IntVar(&cfg.NumPrompts, "num-prompts", 1000, "number of requests to send")
	fs.IntVar(&cfg.RandomInputLen, "random-input-len", 1024, "prompt length in tokens of the random dataset")
	fs.IntVar(&cfg.RandomOutputLen, "random-output-len", 128, "output length (max_tokens) of the random dataset")
	fs.Float64Var(&cfg.RandomRangeRatio, "random-range-ratio", 0, "lengths are uniform in len·[1−r, 1+r]")
	fs.Float64Var(&cfg.Burstiness, "burstiness", 1, "gamma shape of the arrival process (1 = Poisson, <1 burstier)")
	fs.IntVar(&cfg.MaxConcurrency, "max-concurrency", 0, "most requests in flight at once (0 = unlimited)")
	fs.BoolVar(&cfg.IgnoreEOS, "ignore-eos", false, "ask the server to ignore EOS so every request generates its full length")
	fs.Int64Var(&cfg.Seed, "seed", 0, "seed of the dataset and the arrival process")
	fs.IntVar(&cfg.Warmup, "num-warmups", 1, "warm-up requests sent before the measured run")
	fs.BoolVar(&cfg.Tokenize, "tokenize", true, "build exact-length token-id prompts with the server's /tokenize (completions only)")
	fs.Float64Var(&cfg.Tolerance, "metrics-tolerance", 0.05, "relative tolerance of the server ≤ client latency cross-check")
	fs.DurationVar(&cfg.ScrapeInterval, "metrics-scrape-interval", 0, "also scrape /metrics this often during the run (e.g. 100ms) and report the scrapes' latency\n(kept-alive, gzip, like Prometheus); 0 = off")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: govllm bench serve [flags]\n\nBenchmarks an OpenAI-compatible server with streaming requests (like vllm bench serve)\nand cross-checks the server's /metrics against what the client measured.\n\nFlags:\n")
		printDefaults(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return cfg, outs, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "govllm bench serve: unexpected arguments %q\n", fs.Args())
		return cfg, outs, errUsage
	}
	if *dataset != "random" {
		return cfg, outs, fmt.Errorf("--dataset-name %q: only the random dataset exists", *dataset)
	}
	endpointSet := false
	fs.Visit(func(f *flag.Flag) { endpointSet = endpointSet || f.Name == "endpoint" })
	switch *backend {
	case "vllm", "openai":
	case "openai-chat":
		if !endpointSet {
			cfg.Endpoint = "/v1/chat/completions"
		}
	default:
		return cfg, outs, fmt.Errorf("--backend %q: want vllm, openai or openai-chat", *backend)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY") // not the flag's default: --help would print it
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = fmt.Sprintf("http://%s:%d", *host, *port)
	}
	if strings.EqualFold(*rate, "inf") {
		cfg.RequestRate = math.Inf(1)
	} else {
		r, err := strconv.ParseFloat(*rate, 64)
		if err != nil {
			return cfg, outs, fmt.Errorf("--request-rate: %w", err)
		}
		cfg.RequestRate = r
	}
	for _, p := range strings.Split(*percentiles, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return cfg, outs, fmt.Errorf("--metric-percentiles: %w", err)
		}
		cfg.Percentiles = append(cfg.Percentiles, v)
	}
	cfg.CheckMetrics = !*noCheck
	if outs.verify && *noCheck {
		return cfg, outs, errors.New("--verify-metrics needs the /metrics check (drop --no-metrics-check)")
	}
	if !*disableBar {
		cfg.Progress = stderr
		cfg.ProgressIsTTY = isTerminal(stderr)
	}
	return cfg, outs, nil
}

// reportBench prints the result table and writes the requested files.
func reportBench(res *bench.Result, outs benchOutputs, stdout, stderr io.Writer) error {
	res.WriteTable(stdout)
	if outs.saveResult {
		name := outs.fileName
		if name == "" {
			name = fmt.Sprintf("govllm-%s-%s.json", strings.ReplaceAll(filepath.Base(res.ModelID), "/", "_"), res.Date)
		}
		path := filepath.Join(outs.resultDir, name)
		if err := res.SaveJSON(path); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "result saved to %s\n", path)
	}
	if outs.plot != "" {
		if err := res.SavePlot(outs.plot); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "plot saved to %s\n", outs.plot)
	}
	if res.Failed > 0 && res.Completed == 0 {
		return fmt.Errorf("all %d requests failed; first error: %s", res.Failed, res.Errors[0])
	}
	if outs.verify && !res.MetricsOK() {
		return errors.New("the server's /metrics disagree with the client's measurements (see the cross-check above)")
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
