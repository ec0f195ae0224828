package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"govllm/internal/testmodels"
)

// TestResponseShapesOpenAINode runs every response shape of the
// completions and chat endpoints (plain, streamed, logprobs, echo, usage,
// prompt_logprobs, a tool call) through the npm openai SDK against a real
// server on stories260K; shapes.mjs checks what the SDK does not:
// stop_reason and system_fingerprint on every response and chunk, and
// top_logprobs in rank order.
func TestResponseShapesOpenAINode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPING the npm openai SDK test: node is not installed")
	}
	if _, err := os.Stat(filepath.Join(nodeClientDir, "node_modules", "openai")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `npm ci --prefix internal/llm/testdata/npm` (CI does)", nodeClientDir)
	}
	noLeaks(t)
	cfg := testServeConfig()
	cfg.MaxModelLen = 512
	cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	url, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "shapes.mjs")
	cmd.Dir = nodeClientDir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+url+"/v1", "MODEL="+servedModel(t, url))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node shapes.mjs: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), `{"case":`); n != 7 {
		t.Fatalf("%d cases ran, want 7:\n%s", n, out)
	}
	t.Logf("%s", out)
}
