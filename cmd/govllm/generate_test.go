package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"govllm/internal/testmodels"
)

func runGen(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = runGenerate(ctx, args, &o, &e)
	return o.String(), e.String(), err
}

func TestGenerateFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want error
	}{
		{"help", []string{"--help"}, flag.ErrHelp},
		{"unknown flag", []string{"--nope"}, errUsage},
		{"positional", []string{"model.gguf"}, errUsage},
		{"zero max tokens", []string{"--max-tokens", "0"}, errUsage},
		{"bad quantization", []string{"--quantization", "q4"}, errUsage},
		{"bad load format", []string{"--load-format", "x"}, errUsage},
		{"dummy with model", []string{"--load-format", "dummy", "--model", "m.gguf"}, errUsage},
		{"zero threads", []string{"--threads", "0"}, errUsage},
		{"zero max logprobs", []string{"--max-logprobs", "0"}, errUsage},
		{"max logprobs below -1", []string{"--max-logprobs", "-2"}, errUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runGen(t, context.Background(), tc.args...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == flag.ErrHelp && (!strings.Contains(stderr, "-max-tokens") || !strings.Contains(stderr, "Usage: govllm generate")) {
				t.Fatalf("help text lacks flags:\n%s", stderr)
			}
		})
	}
}

func TestGenerateDummy(t *testing.T) {
	args := []string{"--max-tokens", "12", "--temperature", "0.9", "--top-k", "40", "--seed", "5", "--threads", "2"}
	out1, stderr, err := runGen(t, context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "built-in") || !strings.Contains(stderr, "tok/s") {
		t.Fatalf("stderr lacks the dummy notice or the speeds:\n%s", stderr)
	}
	if strings.TrimSpace(out1) == "" {
		t.Fatal("no text generated")
	}
	out2, _, err := runGen(t, context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if out1 != out2 {
		t.Fatalf("same seed, different text:\n%q\n%q", out1, out2)
	}
	for _, q := range []string{"q8_0", "q4_0"} {
		out, _, err := runGen(t, context.Background(), append(args, "--quantization", q)...)
		if err != nil || strings.TrimSpace(out) == "" {
			t.Fatalf("%s: %q, %v", q, out, err)
		}
	}
}

func TestGenerateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := runGen(t, ctx, "--max-tokens", "5"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestGenerateStories260K checks greedy text from every format against the
// golden continuation.
func TestGenerateStories260K(t *testing.T) {
	dir := testmodels.Dir(t, "stories260K")
	hf := testmodels.Dir(t, "stories260K-hf")
	golden, err := os.ReadFile(filepath.Join(dir, "golden", "once_upon_a_time.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(string(golden), "Once upon a time")[:150]
	tests := []struct {
		name string
		args []string
	}{
		{"gguf", []string{"--model", filepath.Join(dir, "stories260K.gguf")}},
		{"llama2c", []string{"--model", filepath.Join(dir, "stories260K.bin"), "--tokenizer", filepath.Join(dir, "tok512.bin")}},
		{"hf", []string{"--model", hf}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runGen(t, context.Background(), append(tc.args, "--prompt", "Once upon a time", "--max-tokens", "60", "--threads", "1")...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, want) {
				t.Fatalf("got  %q\nwant %q…", out, want)
			}
			// The console line comes from the engine's statistics: the
			// golden prompt's 5 ids (BOS included), 60 tokens to the limit.
			g := testmodels.LoadGolden(t, "once_upon_a_time")
			for _, w := range []string{fmt.Sprintf("prompt %d tokens", g.PromptLen), "generated 60 tokens (length)", "tok/s"} {
				if !strings.Contains(stderr, w) {
					t.Fatalf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	t.Run("max model len past the context", func(t *testing.T) {
		_, _, err := runGen(t, context.Background(), "--model", filepath.Join(dir, "stories260K.gguf"), "--max-model-len", "99999")
		if err == nil || !strings.Contains(err.Error(), "context length") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("prompt too long", func(t *testing.T) {
		_, _, err := runGen(t, context.Background(), "--model", filepath.Join(dir, "stories260K.gguf"), "--max-model-len", "3")
		if err == nil || !strings.Contains(err.Error(), "maximum context length") {
			t.Fatalf("err = %v", err)
		}
	})
}
