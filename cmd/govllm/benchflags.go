package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"govllm/internal/bench"
)

// benchOutputs are the bench serve flags about what to do with the result.
type benchOutputs struct {
	saveResult, appendResult, saveDetailed bool
	resultDir, fileName                    string
	metadata                               []string
	plot                                   string
	verify                                 bool
	insecure                               bool
}

// benchFlags are the values of `govllm bench serve`'s flags that are not
// bench.Config fields themselves.
type benchFlags struct {
	host, rate, percentiles, percentileMetrics  string
	port, inputLen, outputLen, batch            int
	sharegptOut, customOut, repeatOut, logprobs int
	probeRate                                   float64
	readyCheck                                  int
	noCheck, disableBar                         bool
	backend, extraBody, templateKwargs          string
	servedName                                  string
	headers, goodput, metricsURLs               stringList
	sampling                                    map[string]*float64
	compat                                      []string
}

// benchSamplingFlags are vLLM's sampling-parameter flags (sent in every
// request when given, as vLLM's benchmark sends them).
var benchSamplingFlags = []string{"temperature", "top-p", "top-k", "min-p", "frequency-penalty", "presence-penalty", "repetition-penalty"}

// benchRefused are vLLM bench serve flags this benchmark cannot honour,
// with the reason it gives.
var benchRefused = []struct{ name, why string }{
	{"use-beam-search", "beam search is not available on this server"},
	{"profile", "there is no /start_profile on this server"},
	{"lora-modules", "this server has no LoRA adapters"},
	{"self-timed", "the timed_trace dataset is not available here"},
	{"no-self-timed", "the timed_trace dataset is not available here"},
	{"plot-timeline", "use --plot FILE (an SVG of TTFT and ITL over time)"},
	{"plot-dataset-stats", "use --plot FILE (an SVG of TTFT and ITL over time)"},
}

// benchCompat are vLLM flags about the client-side tokenizer and dataset
// streaming: prompts here are built and counted with the server's own
// /tokenize, so they are accepted with one warning.
var benchCompat = []struct {
	name   string
	isBool bool
}{{"tokenizer", false}, {"tokenizer-mode", false}, {"trust-remote-code", true}, {"skip-tokenizer-init", true}, {"no-stream", true}}

// addBenchFlags defines bench serve's flags on fs.
func addBenchFlags(fs *flag.FlagSet, cfg *bench.Config, outs *benchOutputs, f *benchFlags) {
	fs.StringVar(&f.backend, "backend", "openai", "vllm or openai (/v1/completions), openai-chat (/v1/chat/completions; the default --endpoint then)")
	fs.StringVar(&cfg.Label, "label", "", "the result's label and file-name prefix (default: the backend)")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "server base URL, e.g. http://127.0.0.1:8000 (default from --host and --port)")
	fs.StringVar(&f.host, "host", "127.0.0.1", "server host (used when --base-url is empty)")
	fs.IntVar(&f.port, "port", 8000, "server port (used when --base-url is empty)")
	fs.StringVar(&cfg.Endpoint, "endpoint", "/v1/completions", "API endpoint: /v1/completions or /v1/chat/completions")
	fs.Var(&f.headers, "header", "KEY=VALUE headers sent with every request (several values, or repeated)")
	fs.IntVar(&cfg.MaxConcurrency, "max-concurrency", 0, "most requests in flight at once (0 = unlimited)")
	fs.StringVar(&cfg.Model, "model", "", "model name to request (default: the first model the server lists)")
	fs.StringVar(&f.servedName, "served-model-name", "", "the model name sent in requests when it differs from --model (--model then names the result's model_id)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "API key sent as a bearer token (default $OPENAI_API_KEY)")
	fs.StringVar(&f.rate, "request-rate", "inf", "requests per second, or inf to send all at once")
	fs.Float64Var(&cfg.Burstiness, "burstiness", 1, "gamma shape of the arrival process (1 = Poisson, <1 burstier)")
	fs.StringVar(&cfg.RampUpStrategy, "ramp-up-strategy", "", "linear or exponential: the rate goes from --ramp-up-start-rps to --ramp-up-end-rps over the run")
	fs.Float64Var(&cfg.RampUpStartRPS, "ramp-up-start-rps", 0, "the ramp-up's first rate (RPS)")
	fs.Float64Var(&cfg.RampUpEndRPS, "ramp-up-end-rps", 0, "the ramp-up's last rate (RPS)")
	fs.Float64Var(&f.probeRate, "probe-request-rate", 0, "refused when positive: probe requests are not available here")
	fs.BoolVar(&f.disableBar, "disable-tqdm", false, "no progress output")
	fs.IntVar(&cfg.Warmup, "num-warmups", 0, "warm-up requests sent before the measured run")
	fs.IntVar(&f.readyCheck, "ready-check-timeout-sec", 0, "retry the first request until it succeeds, up to this many seconds (0 = no check)")
	fs.BoolVar(&cfg.IgnoreEOS, "ignore-eos", false, "ask the server to ignore EOS (always on for the random dataset, as in vLLM)")
	fs.StringVar(&f.percentileMetrics, "percentile-metrics", "", "comma-separated metrics to report: ttft, tpot, itl, e2el, client_queue_time,\ne2el_including_client_queue (default ttft,tpot,itl)")
	fs.StringVar(&f.percentiles, "metric-percentiles", "99", "comma-separated percentiles to report")
	fs.Var(&f.goodput, "goodput", "service-level objectives KEY:VALUE (ttft, tpot, e2el; ms) for the request goodput")
	fs.StringVar(&cfg.RequestIDPrefix, "request-id-prefix", "bench-"+randomHex(4)+"-", "X-Request-Id of request i is this prefix followed by i")
	fs.IntVar(&f.logprobs, "logprobs", -1, "log probabilities per token to ask for (/v1/completions)")
	fs.StringVar(&f.extraBody, "extra-body", "", `JSON object merged into every request body, e.g. '{"top_k": 5}'`)
	fs.StringVar(&f.templateKwargs, "chat-template-kwargs", "", "JSON object sent as every request's chat_template_kwargs")
	fs.BoolVar(&outs.insecure, "insecure", false, "do not verify the server's TLS certificate")
	f.sampling = map[string]*float64{}
	for _, name := range benchSamplingFlags {
		f.sampling[name] = new(float64)
		*f.sampling[name] = math.NaN()
		fs.Var((*optFloat)(f.sampling[name]), name, "sampling parameter "+strings.ReplaceAll(name, "-", "_")+" sent in every request (default: the server's)")
	}
	addBenchDatasetFlags(fs, cfg, f)
	addBenchOutputFlags(fs, cfg, outs, f)
	for _, r := range benchRefused {
		refuse := func(string) error { return errors.New(r.why) }
		if r.name == "lora-modules" {
			fs.Func(r.name, "refused: "+r.why, refuse)
		} else {
			fs.BoolFunc(r.name, "refused: "+r.why, refuse)
		}
	}
	for _, c := range benchCompat {
		note := func(v string) error {
			f.compat = append(f.compat, strings.TrimSuffix("--"+c.name+" "+v, " true"))
			return nil
		}
		usage := "accepted for vLLM command lines, no effect: prompts are built and counted with the server's /tokenize"
		if c.isBool {
			fs.BoolFunc(c.name, usage, note)
		} else {
			fs.Func(c.name, usage, note)
		}
	}
}

// addBenchDatasetFlags defines the dataset flags (vLLM's add_dataset_parser).
func addBenchDatasetFlags(fs *flag.FlagSet, cfg *bench.Config, f *benchFlags) {
	fs.Int64Var(&cfg.Seed, "seed", 0, "seed of the dataset and the arrival process")
	fs.IntVar(&cfg.NumPrompts, "num-prompts", 1000, "number of requests to send")
	fs.StringVar(&cfg.DatasetName, "dataset-name", "random", "random, sharegpt (a ShareGPT JSON), custom (a JSONL of {\"prompt\": …}) or prefix_repetition")
	fs.StringVar(&cfg.DatasetPath, "dataset-path", "", "the sharegpt or custom dataset's file")
	fs.BoolVar(&cfg.NoOversample, "no-oversample", false, "send fewer requests when the dataset has fewer prompts than --num-prompts")
	fs.BoolVar(&cfg.SkipChatTemplate, "skip-chat-template", false, "custom dataset on /v1/completions: send the prompts without a chat template")
	fs.BoolVar(&cfg.DisableShuffle, "disable-shuffle", false, "keep the dataset file's order")
	fs.IntVar(&f.inputLen, "input-len", 0, "the random dataset's input length (sets --random-input-len)")
	fs.IntVar(&f.outputLen, "output-len", 0, "every dataset's output length (sets --random-output-len, --sharegpt-output-len, --custom-output-len,\n--prefix-repetition-output-len)")
	fs.IntVar(&f.customOut, "custom-output-len", 256, "output tokens per request of the custom dataset")
	fs.IntVar(&f.sharegptOut, "sharegpt-output-len", 0, "output tokens per request of the sharegpt dataset (default: each completion's length)")
	fs.IntVar(&cfg.RandomInputLen, "random-input-len", 1024, "prompt length in tokens of the random dataset")
	fs.IntVar(&cfg.RandomOutputLen, "random-output-len", 128, "output length (max_tokens) of the random dataset")
	fs.Float64Var(&cfg.RandomRangeRatio, "random-range-ratio", 0, "lengths are uniform in len·[1−r, 1+r]")
	fs.IntVar(&cfg.RandomPrefixLen, "random-prefix-len", 0, "tokens of a prefix shared by every random prompt, before its random part")
	fs.IntVar(&f.batch, "random-batch-size", 1, "only 1: batches are for vLLM's embeddings benchmark")
	fs.IntVar(&cfg.PrefixLen, "prefix-repetition-prefix-len", 256, "prefix_repetition: tokens of each shared prefix")
	fs.IntVar(&cfg.SuffixLen, "prefix-repetition-suffix-len", 256, "prefix_repetition: tokens of each prompt's random suffix")
	fs.IntVar(&cfg.NumPrefixes, "prefix-repetition-num-prefixes", 10, "prefix_repetition: prefixes; each has --num-prompts / this many prompts")
	fs.IntVar(&f.repeatOut, "prefix-repetition-output-len", 128, "prefix_repetition: output tokens per request")
}

// addBenchOutputFlags defines the result flags and govllm's own.
func addBenchOutputFlags(fs *flag.FlagSet, cfg *bench.Config, outs *benchOutputs, f *benchFlags) {
	fs.BoolVar(&outs.saveResult, "save-result", false, "save the result as JSON (see --result-dir, --result-filename)")
	fs.BoolVar(&outs.saveDetailed, "save-detailed", false, "keep the per-request lists (ttfts, itls, input_lens, errors, …) in the JSON")
	fs.BoolVar(&outs.appendResult, "append-result", false, "append the JSON result to the file as a new line")
	fs.Var((*stringList)(&outs.metadata), "metadata", "KEY=VALUE pairs saved in the JSON result")
	fs.StringVar(&outs.resultDir, "result-dir", "", "directory for the JSON result (default: the current one)")
	fs.StringVar(&outs.fileName, "result-filename", "", "file name of the JSON result (default: vLLM's <label>-<rate>qps[-concurrency<n>]-<model>-<date>.json)")
	fs.StringVar(&outs.plot, "plot", "", "write a latency plot (SVG: TTFT and ITL over time) to this file")
	fs.BoolVar(&outs.verify, "verify-metrics", false, "exit non-zero when the server's /metrics disagrees with the client's measurements")
	fs.BoolVar(&f.noCheck, "no-metrics-check", false, "do not scrape /metrics (for servers without vLLM's metrics)")
	fs.Var(&f.metricsURLs, "metrics-url", "the /metrics of every replica behind --base-url, summed for the cross-check\n(several values, or repeated; default <base-url>/metrics)")
	fs.BoolVar(&cfg.Tokenize, "tokenize", true, "build exact-length token-id prompts with the server's /tokenize (random dataset, completions)")
	fs.Float64Var(&cfg.Tolerance, "metrics-tolerance", 0.05, "relative tolerance of the server ≤ client latency cross-check")
	fs.DurationVar(&cfg.ScrapeInterval, "metrics-scrape-interval", 0, "also scrape /metrics this often during the run (e.g. 100ms) and report the scrapes' latency\n(kept-alive, gzip, like Prometheus); 0 = off")
}

// benchFlagGroups are bench serve's --help groups.
var benchFlagGroups = []flagGroup{
	{"Server", []string{"backend", "base-url", "host", "port", "endpoint", "header", "model", "served-model-name", "api-key", "insecure", "ready-check-timeout-sec"}},
	{"Dataset", []string{"dataset-name", "dataset-path", "num-prompts", "seed", "input-len", "output-len", "random-input-len", "random-output-len",
		"random-range-ratio", "random-prefix-len", "random-batch-size", "sharegpt-output-len", "custom-output-len",
		"prefix-repetition-prefix-len", "prefix-repetition-suffix-len", "prefix-repetition-num-prefixes", "prefix-repetition-output-len",
		"no-oversample", "disable-shuffle", "skip-chat-template"}},
	{"Traffic", []string{"request-rate", "burstiness", "max-concurrency", "ramp-up-strategy", "ramp-up-start-rps", "ramp-up-end-rps", "num-warmups", "probe-request-rate"}},
	{"Requests", append([]string{"ignore-eos", "logprobs", "extra-body", "chat-template-kwargs", "request-id-prefix"}, benchSamplingFlags...)},
	{"Result", []string{"percentile-metrics", "metric-percentiles", "goodput", "label", "save-result", "save-detailed", "append-result", "metadata", "result-dir", "result-filename", "disable-tqdm"}},
	{"Server /metrics (govllm)", []string{"no-metrics-check", "verify-metrics", "metrics-url", "metrics-tolerance", "metrics-scrape-interval", "plot", "tokenize"}},
	{"Accepted without effect", []string{"tokenizer", "tokenizer-mode", "trust-remote-code", "skip-tokenizer-init", "no-stream"}},
	{"Refused", []string{"use-beam-search", "profile", "lora-modules", "self-timed", "no-self-timed", "plot-timeline", "plot-dataset-stats"}},
}

// parseBenchArgs turns `govllm bench serve` flags, read as vLLM's argparse
// reads them (parseGNU), into a bench.Config.
func parseBenchArgs(args []string, stderr io.Writer) (bench.Config, benchOutputs, error) {
	fs := flag.NewFlagSet("bench serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg  bench.Config
		outs benchOutputs
		f    benchFlags
	)
	addBenchFlags(fs, &cfg, &outs, &f)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: govllm bench serve [flags]\n\nBenchmarks an OpenAI-compatible server with streaming requests, as vllm bench serve does\n"+
			"(the same flags, table and JSON result), and cross-checks the server's /metrics against\nwhat the client measured.\n")
		printGroups(fs, benchFlagGroups)
	}
	rest, err := parseGNU(fs, args, "header", "goodput", "metadata", "metrics-url", "lora-modules")
	if err != nil {
		return cfg, outs, err
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "govllm bench serve: unexpected arguments %q\n", rest)
		return cfg, outs, errUsage
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if err := f.apply(&cfg, &outs, given); err != nil {
		return cfg, outs, err
	}
	if len(f.compat) > 0 {
		fmt.Fprintf(stderr, "govllm bench serve: warning: accepted with no effect (prompts are built and counted with the server's /tokenize): %s\n", strings.Join(f.compat, ", "))
	}
	if !f.disableBar {
		cfg.Progress = stderr
		cfg.ProgressIsTTY = isTerminal(stderr)
	}
	return cfg, outs, nil
}

// apply checks the flags and moves them into cfg.
func (f *benchFlags) apply(cfg *bench.Config, outs *benchOutputs, given map[string]bool) error {
	if err := f.applyServer(cfg, given); err != nil {
		return err
	}
	if err := f.applyDataset(cfg, given); err != nil {
		return err
	}
	if err := f.applyTraffic(cfg); err != nil {
		return err
	}
	if err := f.applyBody(cfg); err != nil {
		return err
	}
	if err := f.applyResult(cfg); err != nil {
		return err
	}
	cfg.CheckMetrics = !f.noCheck
	if outs.verify && f.noCheck {
		return errors.New("--verify-metrics needs the /metrics check (drop --no-metrics-check)")
	}
	for _, kv := range outs.metadata {
		if !strings.Contains(kv, "=") {
			return fmt.Errorf("--metadata %q: want KEY=VALUE", kv)
		}
	}
	return nil
}

// applyServer sets the backend, URL, model, key and headers.
func (f *benchFlags) applyServer(cfg *bench.Config, given map[string]bool) error {
	switch f.backend {
	case "vllm", "openai":
	case "openai-chat":
		if !given["endpoint"] {
			cfg.Endpoint = "/v1/chat/completions"
		}
		if cfg.Endpoint != "/v1/chat/completions" {
			return fmt.Errorf("--backend openai-chat needs --endpoint /v1/chat/completions, got %q", cfg.Endpoint)
		}
	default:
		return fmt.Errorf("--backend %q is not available here: vllm, openai or openai-chat", f.backend)
	}
	cfg.Backend = f.backend
	if f.servedName != "" {
		cfg.ModelID, cfg.Model = cfg.Model, f.servedName
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY") // not the flag's default: --help would print it
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + joinHostPort(f.host, f.port)
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return fmt.Errorf("--header %q: want KEY=VALUE", h)
		}
		if cfg.Headers == nil {
			cfg.Headers = map[string]string{}
		}
		cfg.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cfg.MetricsURLs = f.metricsURLs
	cfg.ReadyCheck = time.Duration(f.readyCheck) * time.Second
	return nil
}

// applyDataset maps vLLM's general and per-dataset lengths.
func (f *benchFlags) applyDataset(cfg *bench.Config, given map[string]bool) error {
	if f.batch != 1 {
		return fmt.Errorf("--random-batch-size %d: only 1 (batches are for vLLM's embeddings benchmark)", f.batch)
	}
	if given["input-len"] {
		cfg.RandomInputLen = f.inputLen
	}
	if given["output-len"] {
		cfg.RandomOutputLen, f.sharegptOut, f.customOut, f.repeatOut = f.outputLen, f.outputLen, f.outputLen, f.outputLen
	}
	switch cfg.DatasetName {
	case "sharegpt":
		cfg.OutputLen = f.sharegptOut
	case "custom":
		cfg.OutputLen = f.customOut
	case "prefix_repetition":
		cfg.OutputLen = f.repeatOut
	case "random":
		cfg.IgnoreEOS = true // vLLM's rule for the random dataset on OpenAI-compatible backends
	}
	return nil
}

// applyTraffic reads the request rate.
func (f *benchFlags) applyTraffic(cfg *bench.Config) error {
	if f.probeRate > 0 {
		return errors.New("--probe-request-rate: probe requests are not available here")
	}
	if strings.EqualFold(f.rate, "inf") {
		cfg.RequestRate = math.Inf(1)
		return nil
	}
	r, err := strconv.ParseFloat(f.rate, 64)
	if err != nil {
		return fmt.Errorf("--request-rate: %w", err)
	}
	cfg.RequestRate = r
	return nil
}

// applyBody builds the extra request body: the sampling flags given, then
// --logprobs, --chat-template-kwargs and --extra-body (which wins).
func (f *benchFlags) applyBody(cfg *bench.Config) error {
	body := map[string]any{}
	for _, name := range benchSamplingFlags {
		if v := *f.sampling[name]; !math.IsNaN(v) {
			body[strings.ReplaceAll(name, "-", "_")] = v
		}
	}
	if f.logprobs >= 0 {
		if cfg.Endpoint != "/v1/completions" {
			return errors.New("--logprobs is for /v1/completions (on the chat endpoint pass logprobs and top_logprobs in --extra-body)")
		}
		body["logprobs"] = f.logprobs
	}
	if f.templateKwargs != "" {
		var kw map[string]any
		if err := json.Unmarshal([]byte(f.templateKwargs), &kw); err != nil {
			return fmt.Errorf("--chat-template-kwargs: not a JSON object: %w", err)
		}
		body["chat_template_kwargs"] = kw
	}
	if f.extraBody != "" {
		var extra map[string]any
		if err := json.Unmarshal([]byte(f.extraBody), &extra); err != nil {
			return fmt.Errorf("--extra-body: not a JSON object: %w", err)
		}
		for k, v := range extra {
			body[k] = v
		}
	}
	if len(body) > 0 {
		cfg.ExtraBody = body
	}
	return nil
}

// applyResult reads the percentile and goodput flags.
func (f *benchFlags) applyResult(cfg *bench.Config) error {
	for _, p := range strings.Split(f.percentiles, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return fmt.Errorf("--metric-percentiles: %w", err)
		}
		cfg.Percentiles = append(cfg.Percentiles, v)
	}
	if f.percentileMetrics != "" {
		for _, m := range strings.Split(f.percentileMetrics, ",") {
			cfg.PercentileMetrics = append(cfg.PercentileMetrics, strings.TrimSpace(m))
		}
	}
	for _, g := range f.goodput {
		k, v, ok := strings.Cut(g, ":")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return fmt.Errorf("--goodput %q: want KEY:VALUE, the value a number of milliseconds", g)
		}
		if cfg.Goodput == nil {
			cfg.Goodput = map[string]float64{}
		}
		cfg.Goodput[k] = x
	}
	return nil
}

// optFloat is a float flag whose unset value is NaN.
type optFloat float64

func (o *optFloat) String() string {
	if o == nil || math.IsNaN(float64(*o)) {
		return ""
	}
	return strconv.FormatFloat(float64(*o), 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("invalid number %q", s)
	}
	*o = optFloat(v)
	return nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// joinHostPort is host:port, bracketing an IPv6 host.
func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}
