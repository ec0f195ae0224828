package main

import (
	"reflect"
	"testing"

	"govllm/internal/model"
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
