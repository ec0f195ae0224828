package main

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"govllm/internal/bench"
)

// TestRunExitCodesAndHelp: --help of every command prints its usage on
// stdout (so `govllm serve --help | less` works) and exits 0; usage errors
// exit 2 with the message on stderr, as flag.ExitOnError and vLLM's
// argparse do.
func TestRunExitCodesAndHelp(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // substring of stdout ("" = must be empty)
		stderr     string // substring of stderr ("" = must be empty)
		onceStderr string // appears exactly once on stderr
	}{
		{args: []string{"--help"}, code: 0, stdout: "Usage: govllm <command>"},
		{args: []string{"help"}, code: 0, stdout: "Usage: govllm <command>"},
		{args: nil, code: 2, stderr: "Usage: govllm <command>"},
		{args: []string{"nope"}, code: 2, stderr: `unknown command "nope"`},
		{args: []string{"serve", "--help"}, code: 0, stdout: "Usage: govllm serve [MODEL] [flags]"},
		{args: []string{"serve", "-h"}, code: 0, stdout: "max-num-seqs"},
		{args: []string{"generate", "--help"}, code: 0, stdout: "Usage: govllm generate [flags]"},
		{args: []string{"bench", "--help"}, code: 0, stdout: "Usage: govllm bench serve"},
		{args: []string{"bench", "serve", "--help"}, code: 0, stdout: "--verify-metrics"},
		{args: []string{"bench"}, code: 2, stderr: "Usage: govllm bench serve"},
		{args: []string{"bench", "serve", "--bogus"}, code: 2, onceStderr: "unknown flag: --bogus"},
		{args: []string{"bench", "serve", "extra"}, code: 2, stderr: `unexpected arguments ["extra"]`},
		{args: []string{"generate", "--bogus"}, code: 2, onceStderr: "unknown flag: --bogus"},
		{args: []string{"serve", "--bogus"}, code: 2, onceStderr: "unknown flag: --bogus"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, &stdout, &stderr)
			}
			check := func(name string, got *bytes.Buffer, want string) {
				if want == "" && got.Len() > 0 && name == "stdout" {
					t.Errorf("%s should be empty, got:\n%s", name, got)
				}
				if !strings.Contains(got.String(), want) {
					t.Errorf("%s lacks %q:\n%s", name, want, got)
				}
			}
			check("stdout", &stdout, tc.stdout)
			check("stderr", &stderr, tc.stderr)
			if tc.onceStderr != "" {
				if n := strings.Count(stderr.String(), tc.onceStderr); n != 1 {
					t.Errorf("stderr says %q %d times, want once:\n%s", tc.onceStderr, n, &stderr)
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("help wrote to stderr:\n%s", &stderr)
			}
		})
	}
}

// TestBenchHelpHidesAPIKey: the key from $OPENAI_API_KEY is a fallback,
// never printed as a flag default by --help.
func TestBenchHelpHidesAPIKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-do-not-print")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"bench", "serve", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if strings.Contains(stdout.String()+stderr.String(), "sk-do-not-print") {
		t.Errorf("--help prints the API key:\n%s", &stdout)
	}
}

func TestParseBenchArgs(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "from-env")
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, cfg bench.Config, outs benchOutputs)
	}{
		{name: "defaults", check: func(t *testing.T, cfg bench.Config, outs benchOutputs) {
			if cfg.BaseURL != "http://127.0.0.1:8000" || !math.IsInf(cfg.RequestRate, 1) || cfg.APIKey != "from-env" ||
				!cfg.CheckMetrics || !slices.Equal(cfg.Percentiles, []float64{99}) || cfg.NumPrompts != 1000 || outs.resultDir != "" ||
				cfg.Backend != "openai" || cfg.Warmup != 0 || !cfg.IgnoreEOS || cfg.ExtraBody != nil {
				t.Errorf("defaults: %+v %+v", cfg, outs)
			}
		}},
		{name: "explicit", args: []string{"--host", "h", "--port", "9", "--request-rate", "2.5", "--metric-percentiles", "95, 99.9",
			"--api-key", "k", "--no-metrics-check", "--save-result", "--plot", "p.svg"},
			check: func(t *testing.T, cfg bench.Config, outs benchOutputs) {
				if cfg.BaseURL != "http://h:9" || cfg.RequestRate != 2.5 || cfg.APIKey != "k" || cfg.CheckMetrics ||
					!slices.Equal(cfg.Percentiles, []float64{95, 99.9}) || !outs.saveResult || outs.plot != "p.svg" {
					t.Errorf("explicit: %+v %+v", cfg, outs)
				}
			}},
		{name: "base-url wins", args: []string{"--base-url", "http://x:1", "--port", "9"},
			check: func(t *testing.T, cfg bench.Config, _ benchOutputs) {
				if cfg.BaseURL != "http://x:1" {
					t.Errorf("BaseURL %q", cfg.BaseURL)
				}
			}},
		{name: "a vLLM command line", args: []string{"--backend", "vllm", "--dataset-name", "random", "--model", "m",
			"--random-input-len", "128", "--random-output-len", "64", "--num-prompts", "64", "--max-concurrency", "16", "--ignore-eos"},
			check: func(t *testing.T, cfg bench.Config, _ benchOutputs) {
				if cfg.Endpoint != "/v1/completions" || cfg.Model != "m" || cfg.RandomInputLen != 128 || cfg.NumPrompts != 64 || !cfg.IgnoreEOS {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "openai-chat backend", args: []string{"--backend", "openai-chat"},
			check: func(t *testing.T, cfg bench.Config, _ benchOutputs) {
				if cfg.Endpoint != "/v1/chat/completions" {
					t.Errorf("endpoint %q", cfg.Endpoint)
				}
			}},
		{name: "unknown backend", args: []string{"--backend", "tgi"}, wantErr: "--backend"},
		{name: "bad rate", args: []string{"--request-rate", "fast"}, wantErr: "--request-rate"},
		{name: "bad percentile", args: []string{"--metric-percentiles", "50,x"}, wantErr: "--metric-percentiles"},
		{name: "verify without check", args: []string{"--verify-metrics", "--no-metrics-check"}, wantErr: "--verify-metrics needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, outs, err := parseBenchArgs(tc.args, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg, outs)
		})
	}
}
