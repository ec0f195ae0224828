package main

import (
	"reflect"
	"strings"
	"testing"

	"govllm/internal/model"
	"govllm/internal/tensor"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"MaxNumSeqs": "max_num_seqs", "NumGPUBlocksOverride": "num_gpu_blocks_override", "APIKey": "api_key",
		"Model": "model", "KVCacheMemory": "kv_cache_memory", "MaxModelLen": "max_model_len",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNonDefaultArgs: the start-up line lists what the command line
// changed, in vLLM's spelling, with the API key redacted.
func TestNonDefaultArgs(t *testing.T) {
	c, err := parseServeArgs([]string{"/m.gguf", "--max-num-seqs", "8", "--api-key", "s3cret", "--no-enable-prefix-caching", "--port", "9000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := nonDefaultArgs(c, defaultServeConfig())
	want := []any{"model", "/m.gguf", "max_num_seqs", 8, "enable_prefix_caching", false, "port", 9000, "api_key", "<redacted>"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	if got := nonDefaultArgs(defaultServeConfig(), defaultServeConfig()); len(got) != 0 {
		t.Fatalf("defaults listed: %v", got)
	}
}

// TestKVCacheDTypeResolve: Q8_0 on heads of 16 is refused naming the
// flag and the head dim; on heads of 32, 1 MiB holds 1 MiB ÷ (2 × 2
// layers × 2 heads × 34 bytes) ÷ 16 = 240 blocks (float32: 64); an fp8
// value set after parsing is refused by check.
func TestKVCacheDTypeResolve(t *testing.T) {
	mc := model.Config{Dim: 64, NumLayers: 2, NumHeads: 2, NumKVHeads: 2, HeadDim: 16, VocabSize: 512, HiddenDim: 128, MaxSeqLen: 512}
	c := defaultEngineConfig()
	c.KVCacheMemory, c.KVCacheDType = 1<<20, "q8_0"
	if _, err := c.resolve(mc); err == nil || !strings.Contains(err.Error(), "--kv-cache-dtype q8_0") || !strings.Contains(err.Error(), "head dim is 16") {
		t.Fatalf("q8_0 on heads of 16: %v", err)
	}
	mc.Dim, mc.HeadDim = 64, 32
	r, err := c.resolve(mc)
	if err != nil || r.NumBlocks != 240 || r.Runner(-1).KVCacheDType != tensor.KVQ8_0 {
		t.Fatalf("q8_0: %d blocks, %v", r.NumBlocks, err)
	}
	c.KVCacheDType = "fp8_e4m3"
	if err := c.check(); err == nil || !strings.Contains(err.Error(), `"fp8_e4m3" cannot be honoured`) {
		t.Fatalf("fp8_e4m3: %v", err)
	}
}

// TestCacheConfigInfo: vLLM's CacheConfig keys with Python's str()
// spellings (True/False/None), the blocks the memory budget gives.
func TestCacheConfigInfo(t *testing.T) {
	mc := model.Config{Dim: 64, NumLayers: 2, NumHeads: 4, NumKVHeads: 4, HeadDim: 16, VocabSize: 512, HiddenDim: 128, MaxSeqLen: 512}
	tests := []struct {
		name string
		mod  func(*engineConfig)
		want map[string]string
	}{
		{"from memory", func(c *engineConfig) { c.KVCacheMemory = 1 << 20 }, map[string]string{
			"block_size": "16", "cache_dtype": "auto", "enable_prefix_caching": "True", "is_attention_free": "False",
			"kv_cache_memory_bytes": "1048576", "num_cpu_blocks": "None", "num_gpu_blocks": "64",
			"num_gpu_blocks_override": "None", "sliding_window": "None"}},
		{"override, no prefix caching", func(c *engineConfig) { c.NumGPUBlocksOverride, c.EnablePrefixCaching = 40, false }, map[string]string{
			"block_size": "16", "cache_dtype": "auto", "enable_prefix_caching": "False", "is_attention_free": "False",
			"kv_cache_memory_bytes": "None", "num_cpu_blocks": "None", "num_gpu_blocks": "40",
			"num_gpu_blocks_override": "40", "sliding_window": "None"}},
		// F16: 2 (K,V) × 2 layers × 64 × 2 bytes = 512 bytes a token, 1 MiB
		// holds 128 blocks of 16, twice float32's 64.
		{"fp16 from memory", func(c *engineConfig) { c.KVCacheMemory, c.KVCacheDType = 1<<20, "float16" }, map[string]string{
			"block_size": "16", "cache_dtype": "fp16", "enable_prefix_caching": "True", "is_attention_free": "False",
			"kv_cache_memory_bytes": "1048576", "num_cpu_blocks": "None", "num_gpu_blocks": "128",
			"num_gpu_blocks_override": "None", "sliding_window": "None"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultEngineConfig()
			tt.mod(&c)
			r, err := c.resolve(mc)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.CacheConfigInfo(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}
