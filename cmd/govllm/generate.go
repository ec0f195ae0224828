package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"govllm/internal/llm"
	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/stats"
)

// generateConfig is everything `govllm generate` is configured with: the
// engine (engineConfig, shared with serve) and one request.
type generateConfig struct {
	engineConfig
	Prompt      string
	MaxTokens   int
	Temperature float64
	TopP        float64
	TopK        int
	IgnoreEOS   bool
}

func defaultGenerateConfig() generateConfig {
	e := defaultEngineConfig()
	e.Threads = min(runtime.NumCPU(), 8)
	e.MaxNumSeqs = 1 // one sequence: the KV cache holds one max-model-len sequence
	return generateConfig{engineConfig: e, Prompt: "Once upon a time", MaxTokens: 128, TopP: 1}
}

func parseGenerateArgs(args []string, stderr io.Writer) (generateConfig, error) {
	c := defaultGenerateConfig()
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: govllm generate [flags]

Generate text from a prompt with one sequence on the synchronous engine
(the scheduler, KV cache and sampler serve uses), streaming it to stdout,
and report prefill and decode speed (tokens/s) on stderr from the engine's
statistics.

Models: a .gguf file, a Hugging Face directory (config.json + *.safetensors +
tokenizer.json), or a llama2.c checkpoint (.bin, with --tokenizer naming its
tok*.bin unless one sits next to it). Without --model, a built-in model with
random weights (--dummy-shape) and a byte-level tokenizer is used: fast, but
its text is gibberish.

Flags:
`)
		printDefaults(fs)
	}
	fs.StringVar(&c.Model, "model", "", "model path (.gguf, HF directory or llama2.c .bin); empty = built-in dummy model")
	finish := c.engineConfig.addFlags(fs)
	fs.StringVar(&c.Prompt, "prompt", c.Prompt, "prompt text")
	fs.IntVar(&c.MaxTokens, "max-tokens", c.MaxTokens, "maximum tokens to generate")
	fs.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature; 0 = greedy")
	fs.Float64Var(&c.TopP, "top-p", c.TopP, "nucleus sampling probability mass, in (0, 1]")
	fs.IntVar(&c.TopK, "top-k", 0, "sample from the k most likely tokens; 0 = all")
	fs.BoolVar(&c.IgnoreEOS, "ignore-eos", false, "keep generating after the end-of-sequence token")
	rest, err := parseGNU(fs, args)
	if err != nil {
		return c, err
	}
	err = finish()
	switch {
	case len(rest) > 0:
		err = fmt.Errorf("unexpected arguments %q (the model is --model PATH)", rest)
	case err != nil:
	case c.MaxTokens < 1:
		err = fmt.Errorf("--max-tokens must be ≥ 1, got %d", c.MaxTokens)
	default:
		err = c.engineConfig.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "govllm generate: %v\n", err)
		return c, errUsage
	}
	return c, nil
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseGenerateArgs(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if c.Model == "" {
		fmt.Fprintf(stderr, "no --model: using the built-in %q model with random weights and a byte-level tokenizer; its text is gibberish\n", c.DummyShape)
	}
	t0 := time.Now()
	parts, err := buildEngine(c.engineConfig, logger, nil)
	if err != nil {
		return err
	}
	defer parts.Close()
	return generate(ctx, c, parts, stdout, stderr, time.Since(t0))
}

// generate runs one request on the synchronous engine, streaming its text
// to stdout, and reports the speeds the stats seam measured.
func generate(ctx context.Context, c generateConfig, parts *engineParts, stdout, stderr io.Writer, loadTime time.Duration) error {
	var st consoleStats
	eng, err := llm.New(parts.Config.LLM(), parts.Core, parts.Tok, &st)
	if err != nil {
		return err
	}
	req, err := c.request(parts, stderr)
	if err != nil {
		return err
	}
	if err := eng.AddRequest(req); err != nil {
		return err
	}
	for eng.HasUnfinished() {
		if err := ctx.Err(); err != nil {
			eng.Abort(req.ID)
			fmt.Fprintln(stdout)
			return err
		}
		outs, err := eng.Step(ctx)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if _, err := io.WriteString(stdout, o.Outputs[0].Text); err != nil {
				return err
			}
		}
	}
	if _, err := io.WriteString(stdout, "\n"); err != nil {
		return err
	}
	st.report(stderr, loadTime, c.Threads)
	return nil
}

// request is c's prompt and sampling as an engine request: the prompt is
// tokenized here so that max_tokens can be capped by the room it leaves.
func (c *generateConfig) request(parts *engineParts, stderr io.Writer) (llm.Request, error) {
	tok, maxLen := parts.Tok, parts.Config.MaxModelLen
	prompt := tok.Encode(c.Prompt, true)
	if len(prompt) == 0 {
		if tok.BOS() < 0 {
			return llm.Request{}, errors.New("empty prompt and the tokenizer has no BOS token to start from")
		}
		prompt = []int32{tok.BOS()}
	}
	p := sampling.Default()
	p.MaxTokens = c.MaxTokens
	if room := maxLen - len(prompt); room > 0 && room < p.MaxTokens {
		p.MaxTokens = room
		fmt.Fprintf(stderr, "max tokens capped at %d by the max model length %d\n", room, maxLen)
	}
	p.Temperature, p.TopP, p.TopK, p.IgnoreEOS = float32(c.Temperature), float32(c.TopP), c.TopK, c.IgnoreEOS
	seed := int64(c.Seed)
	p.Seed = &seed
	return llm.Request{ID: "generate", PromptTokenIDs: prompt, Params: p, OutputKind: output.Delta}, nil
}

// consoleStats is generate's StatLogger: it keeps the finished request's
// statistics, the same the Prometheus histograms observe.
type consoleStats struct {
	done *stats.FinishedRequestStats
	// spec sums the speculative drafts (NumDrafts 0: none).
	spec stats.SpecDecodingStats
}

func (s *consoleStats) Record(st *stats.SchedulerStats, it *stats.IterationStats) {
	if len(it.FinishedRequests) > 0 {
		s.done = &it.FinishedRequests[0]
	}
	if sd := st.SpecDecoding; sd != nil {
		s.spec.NumDrafts += sd.NumDrafts
		s.spec.NumDraftTokens += sd.NumDraftTokens
		s.spec.NumAcceptedTokens += sd.NumAcceptedTokens
	}
}

// report prints the console line: prefill speed over the prompt tokens
// computed (not the cached ones), decode speed over the tokens after the
// first (decode time runs from the first token to the last, as vLLM's).
func (s *consoleStats) report(w io.Writer, loadTime time.Duration, threads int) {
	f := s.done
	if f == nil {
		return
	}
	rate := func(n int, d time.Duration) float64 {
		if d <= 0 || n <= 0 {
			return 0
		}
		return float64(n) / d.Seconds()
	}
	fmt.Fprintf(w, "load %.2fs | prompt %d tokens, prefill %.3fs (%.1f tok/s) | generated %d tokens (%s), decode %.3fs (%.1f tok/s) | %d threads\n",
		loadTime.Seconds(), f.NumPromptTokens, f.PrefillTime.Seconds(), rate(f.NumPromptTokens-f.NumCachedTokens, f.PrefillTime),
		f.NumGenerationTokens, f.FinishReason, f.DecodeTime.Seconds(), rate(f.NumGenerationTokens-1, f.DecodeTime), threads)
	if sp := &s.spec; sp.NumDrafts > 0 {
		fmt.Fprintf(w, "speculative: %d drafts, %d of %d drafted tokens accepted (%.1f%%), mean acceptance length %.2f\n",
			sp.NumDrafts, sp.NumAcceptedTokens, sp.NumDraftTokens, 100*float64(sp.NumAcceptedTokens)/float64(sp.NumDraftTokens),
			1+float64(sp.NumAcceptedTokens)/float64(sp.NumDrafts))
	}
}
