package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"govllm/internal/model"
	"govllm/internal/sampling"
	"govllm/internal/tensor"
	"govllm/internal/tokenizer"
)

// generateConfig is everything `govllm generate` is configured with.
type generateConfig struct {
	Model        string
	Tokenizer    string
	LoadFormat   string // auto | dummy
	DummyShape   string
	Quantization string // "" | q8_0 | q4_0
	Prompt       string
	MaxTokens    int
	Temperature  float64
	TopP         float64
	TopK         int
	Seed         int64
	Threads      int
	MaxModelLen  int // 0 = the model's context length
	IgnoreEOS    bool
}

// prefillChunk bounds the tokens of one prefill Forward (and the Workspace).
const prefillChunk = 512

func defaultGenerateConfig() generateConfig {
	return generateConfig{
		LoadFormat:  "auto",
		DummyShape:  "default",
		Prompt:      "Once upon a time",
		MaxTokens:   128,
		Temperature: 0,
		TopP:        1,
		Threads:     min(runtime.NumCPU(), 8),
	}
}

func parseGenerateArgs(args []string, stderr io.Writer) (generateConfig, error) {
	c := defaultGenerateConfig()
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: govllm generate [flags]

Generate text from a prompt with one sequence, streaming it to stdout, and
report prefill and decode speed (tokens/s) on stderr.

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
	fs.StringVar(&c.Tokenizer, "tokenizer", "", "tokenizer path (llama2.c tok512.bin, tokenizer.json, HF dir or .gguf; default: from --model)")
	fs.StringVar(&c.LoadFormat, "load-format", c.LoadFormat, "auto (detect from --model) or dummy (random weights of --dummy-shape)")
	fs.StringVar(&c.DummyShape, "dummy-shape", c.DummyShape, "shape of the built-in random model: "+strings.Join(model.DummyShapes(), ", "))
	fs.StringVar(&c.Quantization, "quantization", "", quantizationUsage)
	fs.StringVar(&c.Prompt, "prompt", c.Prompt, "prompt text")
	fs.IntVar(&c.MaxTokens, "max-tokens", c.MaxTokens, "maximum tokens to generate")
	fs.Float64Var(&c.Temperature, "temperature", c.Temperature, "sampling temperature; 0 = greedy")
	fs.Float64Var(&c.TopP, "top-p", c.TopP, "nucleus sampling probability mass, in (0, 1]")
	fs.IntVar(&c.TopK, "top-k", 0, "sample from the k most likely tokens; 0 = all")
	fs.Int64Var(&c.Seed, "seed", 0, "random seed (sampling, and the dummy model's weights)")
	fs.IntVar(&c.Threads, "threads", c.Threads, "worker threads for the forward pass")
	fs.IntVar(&c.MaxModelLen, "max-model-len", 0, "max prompt + output tokens (default: the model's context length)")
	fs.BoolVar(&c.IgnoreEOS, "ignore-eos", false, "keep generating after the end-of-sequence token")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "govllm generate: unexpected arguments %q (the model is --model PATH)\n", fs.Args())
		return c, errUsage
	}
	bad := func(format string, a ...any) (generateConfig, error) {
		fmt.Fprintf(stderr, "govllm generate: "+format+"\n", a...)
		return c, errUsage
	}
	switch {
	case c.MaxTokens < 1:
		return bad("--max-tokens must be ≥ 1, got %d", c.MaxTokens)
	case c.Threads < 1:
		return bad("--threads must be ≥ 1, got %d", c.Threads)
	case c.MaxModelLen < 0:
		return bad("--max-model-len must be ≥ 0, got %d", c.MaxModelLen)
	case c.Quantization != "" && c.Quantization != "q8_0" && c.Quantization != "q4_0":
		return bad("--quantization must be q8_0 or q4_0, got %q", c.Quantization)
	case c.LoadFormat != "auto" && c.LoadFormat != "dummy":
		return bad("--load-format must be auto or dummy, got %q", c.LoadFormat)
	case c.LoadFormat == "dummy" && c.Model != "":
		return bad("--load-format dummy uses the built-in random model of --dummy-shape; omit --model")
	}
	return c, nil
}

// loadGenerateModel returns the model and tokenizer of c.
func loadGenerateModel(c generateConfig, stderr io.Writer) (*model.Model, *tokenizer.Tokenizer, error) {
	if c.Model == "" {
		mc, err := model.DummyConfig(c.DummyShape)
		if err != nil {
			return nil, nil, fmt.Errorf("--dummy-shape: %w", err)
		}
		dt, err := quantDType(c.Quantization)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "no --model: using the built-in %q model with random weights (%.1fM parameters) and a byte-level tokenizer; its text is gibberish\n",
			c.DummyShape, float64(mc.NumParams())/1e6)
		return model.NewDummy(mc, dt, uint64(c.Seed)), tokenizer.NewDummy(mc.VocabSize), nil
	}
	m, err := model.Load(c.Model, model.LoadOptions{Quantize: c.Quantization})
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.Load(c.Model, tokenizer.LoadOptions{TokenizerPath: c.Tokenizer})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (a llama2.c checkpoint needs --tokenizer tok512.bin)", err)
	}
	if tok.VocabSize() > m.Config.VocabSize {
		return nil, nil, fmt.Errorf("tokenizer has %d tokens, the model only %d", tok.VocabSize(), m.Config.VocabSize)
	}
	return m, tok, nil
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseGenerateArgs(args, stderr)
	if err != nil {
		return err
	}
	t0 := time.Now()
	m, tok, err := loadGenerateModel(c, stderr)
	if err != nil {
		return err
	}
	loadTime := time.Since(t0)
	return generate(ctx, c, m, tok, stdout, stderr, loadTime)
}

// generate runs one sequence: prefill in chunks, then decode token by token,
// streaming the text to stdout.
func generate(ctx context.Context, c generateConfig, m *model.Model, tok *tokenizer.Tokenizer, stdout, stderr io.Writer, loadTime time.Duration) error {
	mc := m.Config
	maxLen := mc.MaxSeqLen
	if c.MaxModelLen > mc.MaxSeqLen {
		return fmt.Errorf("--max-model-len %d exceeds the model's context length %d", c.MaxModelLen, mc.MaxSeqLen)
	}
	if c.MaxModelLen > 0 {
		maxLen = c.MaxModelLen
	}
	prompt := tok.Encode(c.Prompt, true)
	if len(prompt) == 0 {
		if tok.BOS() < 0 {
			return errors.New("empty prompt and the tokenizer has no BOS token to start from")
		}
		prompt = []int32{tok.BOS()}
	}
	if len(prompt) >= maxLen {
		return fmt.Errorf("prompt of %d tokens does not fit the max model length %d (leave room for one output token)", len(prompt), maxLen)
	}
	maxTokens := min(c.MaxTokens, maxLen-len(prompt))
	if maxTokens < c.MaxTokens {
		fmt.Fprintf(stderr, "max tokens capped at %d by the max model length %d\n", maxTokens, maxLen)
	}

	pool := tensor.NewPool(c.Threads)
	defer pool.Close()
	const blockSize = 16
	total := len(prompt) + maxTokens
	numBlocks := (total + blockSize - 1) / blockSize
	kv := model.NewKVCache(mc, numBlocks, blockSize)
	bt := make([]int32, numBlocks)
	for i := range bt {
		bt[i] = int32(i)
	}
	ws := m.NewWorkspace(min(len(prompt), prefillChunk))
	logits := make([]float32, mc.VocabSize)

	params := sampling.Default()
	params.Temperature = float32(c.Temperature)
	params.TopP = float32(c.TopP)
	params.TopK = c.TopK
	params.MaxTokens = maxTokens
	params.Seed = &c.Seed
	params.IgnoreEOS = c.IgnoreEOS
	if err := params.Validate(); err != nil {
		return err
	}
	var sampler sampling.Sampler
	eos := tok.EOS()
	isStop := func(id int32) bool {
		if c.IgnoreEOS {
			return false
		}
		for _, e := range tok.EOSIDs() {
			if id == e {
				return true
			}
		}
		return id == eos
	}

	// Prefill.
	tPrefill := time.Now()
	for start := 0; start < len(prompt); start += prefillChunk {
		n := min(prefillChunk, len(prompt)-start)
		b := &model.Batch{Tokens: prompt[start : start+n], Seqs: []model.Seq{{
			NumTokens: n, Start: start, BlockTable: bt, NeedLogits: start+n == len(prompt),
		}}}
		if err := m.Forward(ws, pool, b, kv, logits); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	prefillTime := time.Since(tPrefill)

	// Decode.
	dec := tok.NewDecoder(prompt, true)
	out := make([]int32, 0, maxTokens)
	tDecode := time.Now()
	var decodeSteps int
	finish := "length"
	for {
		rng := sampling.SeededRNG(c.Seed, len(out))
		id, _ := sampler.Sample(logits, &params, prompt, out, eos, &rng)
		out = append(out, id)
		if isStop(id) {
			finish = "stop"
			break
		}
		if _, err := io.WriteString(stdout, dec.Add(id)); err != nil {
			return err
		}
		if len(out) >= maxTokens {
			break
		}
		if err := ctx.Err(); err != nil {
			finish = "cancelled"
			break
		}
		pos := len(prompt) + len(out) - 1
		b := &model.Batch{Tokens: out[len(out)-1:], Seqs: []model.Seq{{NumTokens: 1, Start: pos, BlockTable: bt, NeedLogits: true}}}
		if err := m.Forward(ws, pool, b, kv, logits); err != nil {
			return err
		}
		decodeSteps++
	}
	decodeTime := time.Since(tDecode)
	if _, err := io.WriteString(stdout, dec.Flush()+"\n"); err != nil {
		return err
	}
	rate := func(n int, d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return float64(n) / d.Seconds()
	}
	fmt.Fprintf(stderr, "load %.2fs | prompt %d tokens, prefill %.3fs (%.1f tok/s) | generated %d tokens (%s), decode %.3fs (%.1f tok/s) | %d threads\n",
		loadTime.Seconds(), len(prompt), prefillTime.Seconds(), rate(len(prompt), prefillTime),
		len(out), finish, decodeTime.Seconds(), rate(decodeSteps, decodeTime), c.Threads)
	if finish == "cancelled" {
		return ctx.Err()
	}
	return nil
}
