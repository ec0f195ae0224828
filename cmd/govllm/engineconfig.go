package main

import (
	"flag"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"unicode"

	"govllm/internal/core"
	"govllm/internal/kvcache"
	"govllm/internal/llm"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/sched"
	"govllm/internal/specdec"
	"govllm/internal/tensor"
)

// engineConfig is what builds an engine, for serve and generate alike: the
// model source and the engine's knobs, with vLLM's flag names. A new engine
// flag goes here: a field, its default, its flag in addFlags, and its
// place in resolve's parts. resolve turns it, with the loaded model's own
// config, into the one resolvedConfig every package takes its part of.
type engineConfig struct {
	Model                string // path; "" = built-in dummy model
	Tokenizer            string // tokenizer path (llama2.c tok512.bin, tokenizer.json, HF dir, .gguf)
	LoadFormat           string // auto | dummy
	DummyShape           string
	Quantization         string // "" (keep the file's types) or one of model.QuantizationNames()
	MaxModelLen          int    // 0 = the model's context length
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	BlockSize            int
	EnablePrefixCaching  bool
	SchedulingPolicy     string // fcfs | priority
	KVCacheMemory        int64  // bytes
	KVCacheDType         string // one of model.KVCacheDTypes (auto = float32)
	NumGPUBlocksOverride int    // > 0 overrides the KV-memory sizing
	Threads              int
	// EngineNice lowers the OS priority of the forward pass's threads by
	// this many nice steps (0 = off), so HTTP handlers and /metrics
	// preempt them at once.
	EngineNice int
	Seed       uint64
	// Limits bound one request's work (--max-request-n, -sequences, -tokens).
	Limits llm.Limits
	// SpeculativeConfig is vLLM's --speculative-config JSON ("" = off).
	SpeculativeConfig string
}

func defaultEngineConfig() engineConfig {
	return engineConfig{
		LoadFormat:          "auto",
		DummyShape:          "default",
		MaxNumSeqs:          128,
		MaxNumBatchedTokens: 2048,
		BlockSize:           kvcache.DefaultBlockSize,
		EnablePrefixCaching: true,
		SchedulingPolicy:    "fcfs",
		KVCacheMemory:       1 << 30,
		KVCacheDType:        "auto",
		Threads:             runtime.NumCPU(),
		Limits:              llm.DefaultLimits(),
	}
}

// quantizationUsage is the --quantization help.
const quantizationUsage = "quantize F32/F16 weights at load (the dummy model's too) as llama-quantize's file type of that name: q4_k_m, q5_k_m, q6_k, q3_k_m, q2_k, q4_1, q5_0, q5_1, iq4_nl, iq4_xs (llama.cpp's per-tensor mix), or q8_0, q4_0 (every matmul weight; embeddings kept) (default: keep the file's types)"

// addFlags registers the engine flags on fs. The returned function
// finishes what a flag value alone cannot (the --kv-cache-memory size);
// call it after fs.Parse.
func (c *engineConfig) addFlags(fs *flag.FlagSet) (finish func() error) {
	kvMem := formatBytes(c.KVCacheMemory)
	fs.StringVar(&c.Tokenizer, "tokenizer", c.Tokenizer, "tokenizer path (llama2.c tok512.bin, tokenizer.json, HF dir or .gguf; default: from the model)")
	fs.StringVar(&c.LoadFormat, "load-format", c.LoadFormat, "auto (read the model) or dummy (random weights of --dummy-shape)")
	fs.StringVar(&c.DummyShape, "dummy-shape", c.DummyShape, "shape of the built-in random model: "+strings.Join(model.DummyShapes(), ", "))
	fs.StringVar(&c.Quantization, "quantization", c.Quantization, quantizationUsage)
	fs.Var((*humanInt)(&c.MaxModelLen), "max-model-len", "max prompt + output `tokens` per request, e.g. 4096, 4k (4000) or 4K (4096) (default: the model's context length)")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", c.MaxNumSeqs, "max running sequences per step")
	fs.Var((*humanInt)(&c.MaxNumBatchedTokens), "max-num-batched-tokens", "`token` budget per step (prefill chunks + decodes), e.g. 2048 or 2K")
	fs.IntVar(&c.BlockSize, "block-size", c.BlockSize, "tokens per KV-cache block")
	fs.BoolFunc("enable-prefix-caching", "reuse the KV of shared prompt prefixes (default on)", setBool(&c.EnablePrefixCaching, false))
	fs.BoolFunc("no-enable-prefix-caching", "turn prefix caching off", setBool(&c.EnablePrefixCaching, true))
	fs.StringVar(&c.SchedulingPolicy, "scheduling-policy", c.SchedulingPolicy, "fcfs or priority (lower 'priority' runs first)")
	fs.StringVar(&kvMem, "kv-cache-memory", kvMem, "KV-cache memory budget, e.g. 512MiB, 2GiB, 1.5GB or bytes")
	fs.Func("kv-cache-dtype", "KV cache format: auto (float32), fp16 or float16 (half precision: 2× the tokens), q8_0 (GGML Q8_0 blocks,\nheads a multiple of 32: 3.76× the tokens); vLLM's fp8 formats are refused (default auto)", c.setKVCacheDType)
	fs.IntVar(&c.NumGPUBlocksOverride, "num-gpu-blocks-override", c.NumGPUBlocksOverride, "number of KV blocks, overriding --kv-cache-memory")
	fs.IntVar(&c.Threads, "threads", c.Threads, "CPU threads for the forward pass")
	fs.IntVar(&c.EngineNice, "engine-nice", c.EngineNice, "lower the OS priority (nice, 0–19) of the forward pass's threads by this much, so HTTP\nrequests and /metrics scrapes preempt them at once; 0 = normal priority (Linux only)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of unseeded sampling (and of the dummy model's weights)")
	fs.IntVar(&c.Limits.MaxN, "max-request-n", c.Limits.MaxN, "max n (sequences per prompt) of one request; 400 above")
	fs.IntVar(&c.Limits.MaxSequences, "max-request-sequences", c.Limits.MaxSequences, "max prompts × n of one request; 400 above")
	fs.IntVar(&c.Limits.MaxTokens, "max-request-tokens", c.Limits.MaxTokens, "max total max_tokens over all sequences of one request; 400 above")
	fs.StringVar(&c.SpeculativeConfig, "speculative-config", c.SpeculativeConfig, "speculative decoding, vLLM's JSON: '{\"method\": \"ngram\", \"num_speculative_tokens\": 4,\n\"prompt_lookup_max\": 4, \"prompt_lookup_min\": 2}' (prompt lookup) or '{\"model\": \"draft.gguf\",\n\"num_speculative_tokens\": 4}' (a small draft model with the same vocabulary) (default: off)")
	fs.IntVar(&c.Limits.MaxLogprobs, "max-logprobs", c.Limits.MaxLogprobs, "max logprobs / top_logprobs / prompt_logprobs of a request (vLLM's); -1 = no cap, and a request's -1 then means the whole vocabulary")
	return func() error {
		n, err := parseBytes(kvMem)
		if err != nil {
			return fmt.Errorf("--kv-cache-memory: %w", err)
		}
		c.KVCacheMemory = n
		return nil
	}
}

// setKVCacheDType sets --kv-cache-dtype, refusing the values govllm has
// no format for (vLLM's fp8 variants, bfloat16).
func (c *engineConfig) setKVCacheDType(v string) error {
	if model.KVCacheDType(v) == nil {
		return fmt.Errorf("%q cannot be honoured on this backend (accepted: %s)", v, strings.Join(model.KVCacheDTypes, ", "))
	}
	c.KVCacheDType = v
	return nil
}

// check refuses flag values that are wrong whatever the model.
func (c *engineConfig) check() error {
	switch {
	case c.LoadFormat != "auto" && c.LoadFormat != "dummy":
		return fmt.Errorf("--load-format must be auto or dummy, got %q", c.LoadFormat)
	case c.LoadFormat == "dummy" && c.Model != "":
		return fmt.Errorf("--load-format dummy uses the built-in random model of --dummy-shape; omit the model")
	case c.Threads < 1:
		return fmt.Errorf("--threads must be positive, got %d", c.Threads)
	case c.Limits.MaxLogprobs < -1 || c.Limits.MaxLogprobs == 0:
		return fmt.Errorf("--max-logprobs must be -1 (no cap) or positive, got %d", c.Limits.MaxLogprobs)
	case c.EngineNice < 0 || c.EngineNice > 19:
		return fmt.Errorf("--engine-nice must be in 0–19, got %d", c.EngineNice)
	case c.MaxModelLen < 0:
		return fmt.Errorf("--max-model-len must be ≥ 0, got %d", c.MaxModelLen)
	}
	if err := c.setKVCacheDType(c.KVCacheDType); err != nil {
		return fmt.Errorf("--kv-cache-dtype: %w", err)
	}
	if err := model.CheckQuantization(c.Quantization); err != nil {
		return fmt.Errorf("--quantization: %w", err)
	}
	if _, err := c.speculative(); err != nil {
		return err
	}
	return nil
}

// speculative parses --speculative-config (nil when off).
func (c *engineConfig) speculative() (*specdec.Config, error) {
	if c.SpeculativeConfig == "" {
		return nil, nil
	}
	sc, err := specdec.ParseConfig(c.SpeculativeConfig)
	if err != nil {
		return nil, fmt.Errorf("--speculative-config: %w", err)
	}
	return &sc, nil
}

// resolvedConfig is an engineConfig resolved against the loaded model:
// every default filled, the KV cache sized. Each package takes its part
// (Core, Runner, LLM, CacheConfigInfo); nothing copies flags by hand.
type resolvedConfig struct {
	engineConfig
	NumBlocks int
	Policy    sched.Policy
	ModelCfg  model.Config
	KVCodec   *tensor.KVCodec // --kv-cache-dtype's format (the draft model's too)
	Spec      *specdec.Config // nil: no speculative decoding
	// Drafter proposes the drafts when Spec is set: the n-gram proposer
	// (resolve) or the draft model (buildEngine, which loads it).
	Drafter sched.Drafter
}

// resolve checks c and fills its defaults from the model's config.
func (c engineConfig) resolve(mc model.Config) (resolvedConfig, error) {
	r := resolvedConfig{engineConfig: c, ModelCfg: mc}
	if r.MaxModelLen <= 0 {
		r.MaxModelLen = mc.MaxSeqLen
	}
	switch {
	case r.MaxModelLen > mc.MaxSeqLen && mc.MaxSeqLen > 0:
		return r, fmt.Errorf("--max-model-len %d exceeds the model's context length %d", r.MaxModelLen, mc.MaxSeqLen)
	case r.BlockSize < 1:
		return r, fmt.Errorf("--block-size must be positive, got %d", r.BlockSize)
	}
	if err := r.setKVCacheDType(r.KVCacheDType); err != nil {
		return r, fmt.Errorf("--kv-cache-dtype: %w", err)
	}
	r.KVCodec = model.KVCacheDType(r.KVCacheDType)
	if err := mc.CheckKVCacheDType(r.KVCodec); err != nil {
		return r, err
	}
	var err error
	if r.Policy, err = sched.ParsePolicy(r.SchedulingPolicy); err != nil {
		return r, fmt.Errorf("--scheduling-policy: %w", err)
	}
	if r.NumBlocks, err = r.kvBlocks(); err != nil {
		return r, err
	}
	if r.Spec, err = r.speculative(); err != nil {
		return r, err
	}
	if r.Spec != nil && r.Spec.Method == "ngram" {
		r.Drafter = sched.DraftFunc(specdec.Ngram{Min: r.Spec.PromptLookupMin, Max: r.Spec.PromptLookupMax}.Propose)
	}
	return r, nil
}

// kvBlocks sizes the KV cache: --num-gpu-blocks-override, else
// --kv-cache-memory ÷ (KV bytes per token × block size), capped at what
// max-num-seqs full-length sequences can use; at least one full-length
// sequence must fit.
func (r *resolvedConfig) kvBlocks() (int, error) {
	perSeq := (r.MaxModelLen + r.BlockSize - 1) / r.BlockSize
	n := r.NumGPUBlocksOverride
	if n <= 0 {
		n = kvcache.NumBlocksForMemory(int(min(r.KVCacheMemory, math.MaxInt)), r.ModelCfg.KVBytesPerToken(r.KVCodec), r.BlockSize)
		n = min(n, perSeq*r.MaxNumSeqs)
	}
	if n < perSeq {
		return 0, fmt.Errorf("the KV cache holds %d blocks of %d tokens (%d tokens), less than one sequence of --max-model-len %d: raise --kv-cache-memory or lower --max-model-len",
			n, r.BlockSize, n*r.BlockSize, r.MaxModelLen)
	}
	return n, nil
}

// Core is the engine core's part.
func (r *resolvedConfig) Core() core.Config {
	return core.Config{
		Sched: sched.Config{
			MaxNumSeqs: r.MaxNumSeqs, MaxNumBatchedTokens: r.MaxNumBatchedTokens, MaxModelLen: r.MaxModelLen,
			Policy: r.Policy, EnableChunkedPrefill: true, Speculative: r.SchedSpeculative(), FastForward: true,
		},
		KV: kvcache.Config{NumBlocks: r.NumBlocks, BlockSize: r.BlockSize, EnablePrefixCaching: r.EnablePrefixCaching},
	}
}

// SchedSpeculative is the scheduler's speculative-decoding part (nil: off).
func (r *resolvedConfig) SchedSpeculative() *sched.Speculative {
	if r.Spec == nil {
		return nil
	}
	return &sched.Speculative{Drafter: r.Drafter, NumTokens: r.Spec.NumSpeculativeTokens}
}

// NumSpeculativeTokens is k, 0 without speculative decoding.
func (r *resolvedConfig) NumSpeculativeTokens() int {
	if r.Spec == nil {
		return 0
	}
	return r.Spec.NumSpeculativeTokens
}

// Runner is the model runner's part.
func (r *resolvedConfig) Runner(eos int32) runner.Config {
	return runner.Config{
		NumBlocks: r.NumBlocks, BlockSize: r.BlockSize, KVCacheDType: r.KVCodec,
		MaxNumBatchedTokens: r.MaxNumBatchedTokens, MaxNumSeqs: r.MaxNumSeqs,
		EOSTokenID: eos, Seed: r.Seed,
	}
}

// LLM is the front end's part.
func (r *resolvedConfig) LLM() llm.Config {
	return llm.Config{MaxModelLen: r.MaxModelLen, Limits: r.Limits}
}

// CacheConfigInfo is the label set of vllm:cache_config_info: the keys of
// vLLM's CacheConfig that mean something here, spelled as Python's str()
// spells them ("True", "None").
func (r *resolvedConfig) CacheConfigInfo() map[string]string {
	override, memory := "None", strconv.FormatInt(r.KVCacheMemory, 10)
	if r.NumGPUBlocksOverride > 0 {
		override, memory = strconv.Itoa(r.NumGPUBlocksOverride), "None"
	}
	return map[string]string{
		"block_size":              strconv.Itoa(r.BlockSize),
		"cache_dtype":             r.KVCodec.Name,
		"enable_prefix_caching":   pyBool(r.EnablePrefixCaching),
		"is_attention_free":       "False",
		"kv_cache_memory_bytes":   memory,
		"num_cpu_blocks":          "None",
		"num_gpu_blocks":          strconv.Itoa(r.NumBlocks),
		"num_gpu_blocks_override": override,
		"sliding_window":          "None",
	}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// nonDefaultArgs lists, as vLLM's start-up line does, the fields of cfg
// that differ from def (two values of the same struct type): snake_case
// names and values, secrets redacted, functions skipped.
func nonDefaultArgs(cfg, def any) []any {
	var out []any
	var walk func(v, d reflect.Value)
	walk = func(v, d reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			fv, dv := v.Field(i), d.Field(i)
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				walk(fv, dv)
			case !f.IsExported() || f.Type.Kind() == reflect.Func:
			case !reflect.DeepEqual(fv.Interface(), dv.Interface()):
				val := fv.Interface()
				if strings.Contains(strings.ToLower(f.Name), "key") {
					val = "<redacted>"
				}
				out = append(out, snake(f.Name), val)
			}
		}
	}
	walk(reflect.ValueOf(cfg), reflect.ValueOf(def))
	return out
}

// snake spells a Go field name as vLLM's argument ("MaxNumSeqs" →
// "max_num_seqs", "NumGPUBlocksOverride" → "num_gpu_blocks_override").
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
