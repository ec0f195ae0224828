package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchLine is one `vllm bench serve` command line and what bench serve
// makes of it against a real server.
type benchLine struct {
	line string   // after "vllm bench serve"; SHAREGPT, CUSTOM and DIR are replaced by test files
	want []string // in the table (stdout)
	err  string   // the refusal (exit 2 or 1, on stderr), when refused
	json func(t *testing.T, dir string)
}

// vllmBenchLines are command lines of vLLM's benchmarking docs
// (docs/benchmarking/cli.md: the ShareGPT, custom-dataset, ramp-up,
// VisionArena and prefix-repetition examples) and of vllm/benchmarks/serve.py's
// flags (percentiles, goodput, --save-detailed, --metadata), with tiny sizes.
// The expected table rows are those serve.py prints for the flags given.
var vllmBenchLines = []benchLine{
	{line: "--backend vllm --model NousResearch/Hermes-3-Llama-3.1-8B --endpoint /v1/completions --dataset-name sharegpt --dataset-path SHAREGPT --num-prompts 10",
		want: []string{"Successful requests:                     10", "Failed requests:                         0", "Mean TTFT (ms):", "P99 ITL (ms):"}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --dataset-name random --random-input-len 32 --random-output-len 8 --num-prompts 8 " +
		"--request-rate 50 --burstiness 0.5 --max-concurrency 4 --percentile-metrics ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue --metric-percentiles 50,90,99",
		want: []string{"Maximum request concurrency:             4", "Request rate configured (RPS):           50.00", "Total generated tokens:                  64",
			"P50 TTFT (ms):", "P90 TPOT (ms):", "Mean E2EL (ms):", "---------------Client-side Queueing---------------", "Median Client Queue Time (ms):",
			"--------Queue-inclusive End-to-end Latency--------", "P99 E2EL incl. Client Queue (ms):"}},
	{line: "--port PORT --save-result --save-detailed --backend vllm --model meta-llama/Llama-3.1-8B-Instruct --endpoint /v1/completions " +
		"--dataset-name custom --dataset-path CUSTOM --skip-chat-template --num-prompts 8 --max-concurrency 1 --custom-output-len 6 --temperature=0.3 --top-p=0.75 --result-dir DIR",
		want: []string{"Successful requests:                     8", "Total generated tokens:                  48"},
		json: func(t *testing.T, dir string) {
			m := readResult(t, dir, "vllm-infqps-concurrency1-Llama-3.1-8B-Instruct-*.json")
			if m["backend"] != "vllm" || m["model_id"] != "meta-llama/Llama-3.1-8B-Instruct" || len(m["ttfts"].([]any)) != 8 {
				t.Errorf("result: backend %v model_id %v ttfts %v", m["backend"], m["model_id"], m["ttfts"])
			}
		}},
	{line: "--backend openai-chat --model NousResearch/Hermes-3-Llama-3.1-8B --endpoint /v1/chat/completions --dataset-name random --random-input-len 16 --random-output-len 4 --num-prompts 4 " +
		"--save-result --result-dir DIR --result-filename chat.json",
		want: []string{"Successful requests:                     4"},
		json: func(t *testing.T, dir string) {
			m := readResult(t, dir, "chat.json")
			for _, k := range []string{"ttfts", "itls", "input_lens", "errors", "generated_texts"} {
				if _, ok := m[k]; ok {
					t.Errorf("%q saved without --save-detailed", k)
				}
			}
			if m["backend"] != "openai-chat" || m["endpoint_type"] != "openai-chat" || m["request_goodput"] != nil {
				t.Errorf("result: %v", m)
			}
		}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --ramp-up-strategy linear --ramp-up-start-rps 20 --ramp-up-end-rps 100 --random-input-len 16 --random-output-len 4 --num-prompts 8 --save-result --result-dir DIR",
		want: []string{"Successful requests:                     8"},
		json: func(t *testing.T, dir string) {
			m := readResult(t, dir, "openai-ramp-up-linear-20.0qps-100.0qps-Hermes-3-Llama-3.1-8B-*.json")
			if m["ramp_up_strategy"] != "linear" || m["ramp_up_start_rps"] != 20.0 || m["ramp_up_end_rps"] != 100.0 {
				t.Errorf("ramp-up in the result: %v %v %v", m["ramp_up_strategy"], m["ramp_up_start_rps"], m["ramp_up_end_rps"])
			}
		}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --ramp-up-strategy linear --ramp-up-start-rps 1 --ramp-up-end-rps 10 --request-rate 5",
		err: "with --ramp-up-strategy, do not give --request-rate"},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --random-input-len 16 --random-output-len 4 --num-prompts 4 --goodput ttft:60000 tpot:60000 e2el:60000",
		want: []string{"Request goodput (req/s):"}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --random_input_len 16 --random_output_len=4 --num-prompts=4 --request-rate=inf --tokenizer meta-llama/Llama-3.1-8B --trust-remote-code",
		want: []string{"Successful requests:                     4"}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --random-input-len 16 --random-output-len 4 --num-prompts 4 --extra-body {\"temperature\":0} --header x-bench=1 --request-id-prefix doc-",
		want: []string{"Successful requests:                     4"}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --random-input-len 16 --random-output-len 4 --num-prompts 2 --append-result --result-filename r.json --result-dir DIR --metadata version=0.1 tp=1",
		want: []string{"Successful requests:                     2"},
		json: func(t *testing.T, dir string) {
			m := readResult(t, dir, "r.json")
			if m["version"] != "0.1" || m["tp"] != "1" {
				t.Errorf("metadata in the result: %v %v", m["version"], m["tp"])
			}
		}},
	{line: "--backend openai-chat --model Qwen/Qwen2-VL-7B-Instruct --endpoint /v1/chat/completions --dataset-name hf --dataset-path lmarena-ai/VisionArena-Chat --hf-split train --num-prompts 1000",
		err: "unknown flag: --hf-split"},
	{line: "--backend openai-chat --model Qwen/Qwen2-VL-7B-Instruct --endpoint /v1/chat/completions --dataset-name hf --dataset-path lmarena-ai/VisionArena-Chat --num-prompts 1000",
		err: `--dataset-name "hf" is not available here`},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --dataset-name sonnet --dataset-path benchmarks/sonnet.txt", err: `--dataset-name "sonnet" is not available here`},
	{line: "--backend openai --model meta-llama/Llama-3.1-8B-Instruct --dataset-name prefix_repetition --num-prompts 10 --prefix-repetition-prefix-len 32 " +
		"--prefix-repetition-suffix-len 8 --prefix-repetition-num-prefixes 5 --prefix-repetition-output-len 4",
		want: []string{"Successful requests:                     10", "Total input tokens:                      400", "Total generated tokens:                  40"}},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --dataset-name prefix_repetition --num-prompts 4 --prefix-repetition-num-prefixes 5",
		err: "--num-prompts (4) ≥ --prefix-repetition-num-prefixes (5)"},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --dataset-name burstgpt --dataset-path BurstGPT_without_fails_2.csv",
		err: `--dataset-name "burstgpt" is not available here`},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --dataset-name random --dataset-path data.json", err: "cannot use the random dataset with --dataset-path"},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --profile", err: "there is no /start_profile on this server"},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --use-beam-search", err: "beam search is not available on this server"},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --lora-modules sql-lora sql-lora2", err: "this server has no LoRA adapters"},
	{line: "--backend tgi --model NousResearch/Hermes-3-Llama-3.1-8B", err: `--backend "tgi" is not available here`},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --percentile-metrics ttft,goodput", err: `--percentile-metrics: unknown metric "goodput"`},
	{line: "--model NousResearch/Hermes-3-Llama-3.1-8B --goodput ttft=5", err: `--goodput "ttft=5": want KEY:VALUE`},
}

// TestVLLMBenchServeCommandLines runs each line through `govllm bench
// serve` against `govllm serve` on the built-in dummy model (served under
// the docs' model names): the accepted ones run to vLLM's result table
// (and JSON result), the others are refused with the message naming the
// flag or value.
func TestVLLMBenchServeCommandLines(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"NousResearch/Hermes-3-Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"}
	url, _ := startServe(t, cfg)
	port := url[strings.LastIndex(url, ":")+1:]
	files := t.TempDir()
	sharegpt, custom := filepath.Join(files, "sharegpt.json"), filepath.Join(files, "custom.jsonl")
	writeBenchData(t, sharegpt, custom)
	for _, tc := range vllmBenchLines {
		t.Run(tc.line, func(t *testing.T) {
			dir := t.TempDir()
			line := strings.NewReplacer("SHAREGPT", sharegpt, "CUSTOM", custom, "DIR", dir, "PORT", port).Replace(tc.line)
			args := append([]string{"serve"}, strings.Fields(line)...)
			if !strings.Contains(line, "--port") {
				args = append(args, "--base-url", url)
			}
			args = append(args, "--disable-tqdm")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"bench"}, args...), &stdout, &stderr)
			if tc.err != "" {
				if code == 0 || !strings.Contains(stderr.String(), tc.err) {
					t.Fatalf("exit %d, stderr lacks %q:\n%s", code, tc.err, &stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
			}
			for _, w := range append([]string{"============ Serving Benchmark Result ============"}, tc.want...) {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("the table lacks %q:\n%s", w, &stdout)
				}
			}
			if tc.json != nil {
				tc.json(t, dir)
			}
		})
	}
}

// writeBenchData writes a ShareGPT JSON (vLLM's ShareGPTDataset format: a
// list of {"conversations": [{"from", "value"}, …]}; an entry of one turn
// is skipped) and a custom JSONL ({"prompt": …} per line).
func writeBenchData(t *testing.T, sharegpt, custom string) {
	t.Helper()
	type turn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	type entry struct {
		ID            string `json:"id"`
		Conversations []turn `json:"conversations"`
	}
	entries := []entry{
		{"a", []turn{{"human", "What is the capital of France?"}, {"gpt", "Paris."}}},
		{"b", []turn{{"human", "Name three colours."}, {"gpt", "Red, green and blue."}}},
		{"c", []turn{{"human", "only one turn"}}},
		{"d", []turn{{"human", "Say hello in Spanish."}, {"gpt", "Hola."}, {"human", "And in German?"}, {"gpt", "Hallo."}}},
	}
	b, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sharegpt, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := `{"prompt": "Write a haiku about the sea."}` + "\n" + `{"prompt": "List two prime numbers."}` + "\n"
	if err := os.WriteFile(custom, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readResult reads the one JSON result matching pattern in dir.
func readResult(t *testing.T, dir, pattern string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(files) != 1 {
		all, _ := filepath.Glob(filepath.Join(dir, "*"))
		t.Fatalf("%d files match %s; the directory holds %v", len(files), pattern, all)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return m
}
