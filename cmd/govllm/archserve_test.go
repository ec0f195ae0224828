package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"govllm/internal/testmodels"
)

// familyTemplates is the chat template of each synthetic architecture's
// family, from shared/templates. Gemma 3's own template is not in the set:
// it is Gemma 2's turn format (<start_of_turn>user … <end_of_turn>), so
// gemma3 takes Gemma 2's.
var familyTemplates = map[string]string{
	"llama":    "meta-llama-Llama-3.1-8B-Instruct.jinja",
	"qwen2":    "Qwen-Qwen2.5-7B-Instruct.jinja",
	"qwen3":    "Qwen-Qwen3-0.6B.jinja",
	"qwen3moe": "Qwen-Qwen3-0.6B.jinja",
	"gemma2":   "google-gemma-2-2b-it.jinja",
	"gemma3":   "google-gemma-2-2b-it.jinja",
	"phi3":     "microsoft-Phi-3.5-mini-instruct.jinja",
}

// TestServeEveryArchitecture serves each synthetic GGUF file of
// shared/models/synthetic with its family's chat template
// (--chat-template) and asks it one chat completion: 200, with the usage
// counting the prompt and the 8 generated tokens. A template the chat
// template engine cannot compile or render is a loud skip naming the
// error (the engine's gaps are fixed elsewhere), never a pass.
func TestServeEveryArchitecture(t *testing.T) {
	templates := testmodels.Shared(t, "templates")
	for _, sm := range testmodels.SyntheticModels(t) {
		t.Run(sm.Arch+"/"+sm.Quant, func(t *testing.T) {
			tmpl, ok := familyTemplates[sm.Arch]
			if !ok {
				t.Fatalf("no chat template for architecture %s: add its family's to familyTemplates", sm.Arch)
			}
			cfg := testServeConfig()
			cfg.Model = sm.Path
			cfg.MaxModelLen = 512 // the synthetic models' context: Llama 3.1's template alone is ~250 of their byte-level tokens
			cfg.ChatTemplate = filepath.Join(templates, tmpl)
			cfg.ServedModelNames = []string{"m"}
			url, err := startServeOrErr(t, cfg)
			if err != nil {
				if strings.Contains(err.Error(), "chat template") {
					t.Skipf("SKIPPING: %s does not compile with the chat template engine: %v", tmpl, err)
				}
				t.Fatal(err)
			}
			// No system message: Gemma's templates refuse one.
			body := `{"model": "m", "messages": [{"role": "user", "content": "Name a colour."},
				{"role": "assistant", "content": "Blue."}, {"role": "user", "content": "Another?"}],
				"max_tokens": 8, "temperature": 0, "ignore_eos": true}`
			resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A template's own raise_exception ("rejected the conversation")
			// is this test's mistake, not the engine's: it fails below.
			if resp.StatusCode != http.StatusOK && bytes.Contains(b, []byte("template")) && !bytes.Contains(b, []byte("rejected the conversation")) {
				t.Skipf("SKIPPING: %s does not render with the chat template engine: %d %s", tmpl, resp.StatusCode, b)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var out struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
					TotalTokens      int `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			u := out.Usage
			// The rendered prompt holds at least the messages' text.
			if len(out.Choices) != 1 || u.PromptTokens < len("Name a colour.Blue.Another?")/4 || u.CompletionTokens != 8 ||
				u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Fatalf("choices %d, usage %+v: want one choice, the prompt counted and 8 completion tokens", len(out.Choices), u)
			}
			t.Logf("%s with %s: %d prompt tokens, reply %q", filepath.Base(sm.Path), tmpl, u.PromptTokens, out.Choices[0].Message.Content)
		})
	}
}

// startServeOrErr is startServe that returns serve's error when it stops
// before becoming healthy (a model or template it refuses).
func startServeOrErr(t *testing.T, cfg serveConfig) (string, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	url := "http://" + ln.Addr().String()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err // for the cleanup
			return "", fmt.Errorf("serve stopped: %w", err)
		default:
		}
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server did not become healthy")
	return "", nil
}
