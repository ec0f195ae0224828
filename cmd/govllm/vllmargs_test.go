package main

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// serveLine is one `vllm serve` command line and what serve makes of it.
type serveLine struct {
	line string // after "vllm serve"
	env  string // $VLLM_API_KEY
	want func(c *serveConfig)
	err  string // the refusal's message, when refused
}

var vllmServeLines = []serveLine{
	{line: "Qwen/Qwen2.5-1.5B-Instruct", want: func(c *serveConfig) { c.Model = "Qwen/Qwen2.5-1.5B-Instruct" }},
	{line: "NousResearch/Meta-Llama-3-8B-Instruct --dtype auto --api-key token-abc123", want: func(c *serveConfig) {
		c.Model, c.APIKey, c.compat = "NousResearch/Meta-Llama-3-8B-Instruct", []string{"token-abc123"}, []string{"--dtype auto"}
	}},
	{line: "facebook/opt-13b --tensor-parallel-size 4", err: "tensor parallelism is not available on this backend"},
	{line: "gpt2 --tensor-parallel-size 4 --pipeline-parallel-size 2", err: "tensor parallelism is not available on this backend"},
	{line: "meta-llama/Llama-3.1-8B-Instruct -tp 2", err: "tensor parallelism is not available on this backend"},
	{line: "meta-llama/Llama-3.1-8B-Instruct -tp 1 --max-model-len 4k", want: func(c *serveConfig) {
		c.Model, c.MaxModelLen, c.compat = "meta-llama/Llama-3.1-8B-Instruct", 4000, []string{"--tensor-parallel-size 1"}
	}},
	{line: "unsloth/Llama-3.2-1B-Instruct --served-model-name llama-3.2 llama --port 8001", want: func(c *serveConfig) {
		c.Model, c.ServedModelNames, c.Port = "unsloth/Llama-3.2-1B-Instruct", []string{"llama-3.2", "llama"}, 8001
	}},
	{line: "DeepSeek-R1-0528 --tensor-parallel-size 16 --pipeline-parallel-size 1 --trust-remote-code --served-model-name deepseek-r1-0528 --max-model-len 32768 --gpu-memory-utilization 0.95 --enforce-eager",
		err: "tensor parallelism is not available on this backend"},
	{line: "Qwen/Qwen3-0.6B --trust-remote-code --max-model-len 32768 --gpu-memory-utilization 0.95 --enforce-eager", want: func(c *serveConfig) {
		c.Model, c.MaxModelLen = "Qwen/Qwen3-0.6B", 32768
		c.compat = []string{"--trust-remote-code", "--gpu-memory-utilization 0.95", "--enforce-eager"}
	}},
	{line: "facebook/opt-125m --swap-space 16 --disable-log-requests", want: func(c *serveConfig) {
		c.Model, c.DisableLogRequests, c.compat = "facebook/opt-125m", true, []string{"--swap-space 16"}
	}},
	{line: "--model meta-llama/Llama-2-7b-hf --enable-prefix-caching", want: func(c *serveConfig) { c.Model = "meta-llama/Llama-2-7b-hf" }},
	{line: "meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8", err: `"fp8" cannot be honoured on this backend (accepted: auto, fp16, float16, q8_0)`},
	{line: "meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8_e5m2", err: `"fp8_e5m2" cannot be honoured on this backend (accepted: auto, fp16, float16, q8_0)`},
	{line: "meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp16", want: func(c *serveConfig) {
		c.Model, c.KVCacheDType = "meta-llama/Llama-3.1-8B-Instruct", "fp16"
	}},
	{line: "Qwen/Qwen3-0.6B --kv-cache-dtype=float16", want: func(c *serveConfig) { c.Model, c.KVCacheDType = "Qwen/Qwen3-0.6B", "float16" }},
	{line: "Qwen/Qwen3-0.6B --kv-cache-dtype q8_0", want: func(c *serveConfig) { c.Model, c.KVCacheDType = "Qwen/Qwen3-0.6B", "q8_0" }},
	{line: "mistralai/Mistral-7B-Instruct-v0.3 --max_model_len 2048 --max_num_seqs=16", want: func(c *serveConfig) {
		c.Model, c.MaxModelLen, c.MaxNumSeqs = "mistralai/Mistral-7B-Instruct-v0.3", 2048, 16
	}},
	{line: "ibm-granite/granite-3.1-8b-instruct --host 0.0.0.0 --port=8080 --api-key k1 k2", env: "from-env", want: func(c *serveConfig) {
		c.Model, c.Host, c.Port, c.APIKey = "ibm-granite/granite-3.1-8b-instruct", "0.0.0.0", 8080, []string{"k1", "k2"}
	}},
	{line: "Qwen/Qwen2.5-7B-Instruct --enable-log-requests --disable-log-stats", env: "from-env", want: func(c *serveConfig) {
		c.Model, c.DisableLogStats, c.APIKey = "Qwen/Qwen2.5-7B-Instruct", true, []string{"from-env"}
	}},
	{line: "google/gemma-2-2b-it --dtype bfloat16 --max-num-seqs 256 --max-num-batched-tokens 8K", want: func(c *serveConfig) {
		c.Model, c.MaxNumSeqs, c.MaxNumBatchedTokens, c.compat = "google/gemma-2-2b-it", 256, 8192, []string{"--dtype bfloat16"}
	}},
	{line: "facebook/opt-125m --dtype int8", err: `"int8" cannot be honoured on this backend`},
	{line: "facebook/opt-125m --gpu-memory-utilization 1.5", err: "must be a fraction in (0, 1]"},
	{line: "facebook/opt-125m --max-model-len 4.5K", err: "decimals are not allowed with binary suffixes: did you mean 4.5k?"},
	{line: "meta-llama/Llama-3.1-8B-Instruct --data-parallel-size 2", err: "data parallelism is not available on this backend"},
	{line: "Qwen/Qwen2.5-1.5B-Instruct --scheduling-policy priority --seed 42 --shutdown-timeout 30", want: func(c *serveConfig) {
		c.Model, c.SchedulingPolicy, c.Seed, c.ShutdownTimeout = "Qwen/Qwen2.5-1.5B-Instruct", "priority", 42, 30*time.Second
	}},
	{line: "a/model --model b/model", err: `the model is given twice: "a/model" and --model "b/model"`},
	{line: "facebook/opt-125m --pipeline-parallel-size=1 -dp 1 --disable-custom-all-reduce --cpu-offload-gb 0 --kv-cache-dtype auto", want: func(c *serveConfig) {
		c.Model = "facebook/opt-125m"
		c.compat = []string{"--pipeline-parallel-size 1", "--data-parallel-size 1", "--disable-custom-all-reduce", "--cpu-offload-gb 0"}
	}},
	{line: "facebook/opt-125m --no-such-flag 1", err: "unknown flag: --no-such-flag"},
	{line: "facebook/opt-125m --enable-prefix-caching=false --disable-log-requests --enable-log-requests=false", want: func(c *serveConfig) {
		c.Model, c.EnablePrefixCaching, c.DisableLogRequests = "facebook/opt-125m", false, true
	}},
	{line: "facebook/opt-125m --no-enable-prefix-caching=false", want: func(c *serveConfig) { c.Model = "facebook/opt-125m" }},
	{line: "facebook/opt-125m --uvicorn-log-level warning", want: func(c *serveConfig) { c.Model, c.LogLevel = "facebook/opt-125m", slog.LevelWarn }},
	{line: "facebook/opt-125m --uvicorn-log-level loud", err: `unknown log level "loud"`},
}

// TestVLLMServeCommandLines runs `vllm serve` command lines of vLLM's
// documentation and examples (with the issue's) through serve's parser:
// each parses to the expected config, with the GPU-only flags whose value
// is a no-op here listed for the start-up warning, or fails naming why.
func TestVLLMServeCommandLines(t *testing.T) {
	for _, tt := range vllmServeLines {
		t.Run(tt.line, func(t *testing.T) {
			t.Setenv("GOVLLM_API_KEY", "")
			t.Setenv("VLLM_API_KEY", tt.env)
			var stderr strings.Builder
			got, err := parseServeArgs(strings.Fields(tt.line), &stderr)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, &stderr)
			}
			want := defaultServeConfig()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseHumanInt(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true}, {"4k", 4000, true}, {"4K", 4096, true}, {"25.6k", 25600, true},
		{"1m", 1000000, true}, {"1M", 1 << 20, true}, {"1g", 1e9, true}, {"0", 0, true},
		{"4.5K", 0, false}, {"k", 0, false}, {"", 0, false}, {"4x", 0, false}, {"-1k", 0, false}, {"3T", 0, false},
	}
	for _, tt := range tests {
		got, err := parseHumanInt(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseHumanInt(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestServeLogLevel: --uvicorn-log-level sets the level of serve's log. A
// run whose context is already done starts, drains and stops at once.
func TestServeLogLevel(t *testing.T) {
	for _, tt := range []struct {
		level       string
		info, warns bool
	}{{"info", true, true}, {"warning", false, true}, {"error", false, false}} {
		t.Run(tt.level, func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr strings.Builder
			err := runServe(ctx, []string{"--host", "127.0.0.1", "--port", "0", "--threads", "1", "--max-model-len", "256",
				"--kv-cache-memory", "32MiB", "--dtype", "auto", "--uvicorn-log-level", tt.level}, &stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			log := stderr.String()
			if strings.Contains(log, "level=INFO") != tt.info || strings.Contains(log, "level=WARN") != tt.warns {
				t.Errorf("at %s: INFO lines %v (want %v), WARN lines %v (want %v):\n%s", tt.level,
					strings.Contains(log, "level=INFO"), tt.info, strings.Contains(log, "level=WARN"), tt.warns, log)
			}
		})
	}
}

// TestServeConfigFile: vLLM's --config YAML file. Its keys are flags
// (dashes or underscores), lists give several values, booleans the bare
// flag or its --no- form; the command line (and a positional MODEL)
// overrides it; a value serve refuses on the command line is refused from
// the file too.
func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := write("full.yaml", "model: meta-llama/Llama-3.1-8B-Instruct\nport: 6379\nmax_model_len: 4k\n"+
		"served-model-name: [a, b]\nenable-prefix-caching: false\ntrust-remote-code: true\nuvicorn-log-level: warning\n")
	tests := []struct {
		name string
		args []string
		want func(c *serveConfig)
		err  string
	}{
		{"every kind of value", []string{"--config", full}, func(c *serveConfig) {
			c.Model, c.Port, c.MaxModelLen, c.ServedModelNames = "meta-llama/Llama-3.1-8B-Instruct", 6379, 4000, []string{"a", "b"}
			c.EnablePrefixCaching, c.compat, c.LogLevel = false, []string{"--trust-remote-code"}, slog.LevelWarn
		}, ""},
		{"the command line overrides", []string{"other/model", "--config=" + full, "--port", "8001", "--served-model-name", "c", "--enable-prefix-caching"}, func(c *serveConfig) {
			c.Model, c.Port, c.MaxModelLen, c.ServedModelNames = "other/model", 8001, 4000, []string{"c"}
			c.compat, c.LogLevel = []string{"--trust-remote-code"}, slog.LevelWarn
		}, ""},
		{"a refused value", []string{"--config", write("tp.yaml", "tensor_parallel_size: 2\n")}, nil, "tensor parallelism is not available on this backend"},
		{"an unknown flag", []string{"--config", write("bad.yaml", "no_such_flag: 1\n")}, nil, "unknown flag: --no-such-flag"},
		{"a nested value", []string{"--config", write("nested.yaml", "compilation-config: {level: 3}\n")}, nil, "unsupported value"},
		{"a missing file", []string{"--config", dir + "/absent.yaml"}, nil, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOVLLM_API_KEY", "")
			t.Setenv("VLLM_API_KEY", "")
			got, err := parseServeArgs(tt.args, &strings.Builder{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaultServeConfig()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}
