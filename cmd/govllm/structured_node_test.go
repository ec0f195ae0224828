package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"govllm/internal/testmodels"
)

// nodeClientDir holds the npm openai SDK client (package.json and lock
// file; CI runs npm ci there).
const nodeClientDir = "../../internal/llm/testdata/npm"

// TestStructuredOutputsOpenAINode: the npm openai SDK's zodResponseFormat
// and client.chat.completions.parse() against a real server, on the
// random-weight model (its unconstrained text is gibberish: the constraint
// alone makes the output valid) and on stories260K. The SDK parses each
// reply with its zod schema (it throws otherwise); here every content is
// validated against the JSON Schema the SDK sent, with a JSON Schema
// library, and must have finished with "stop"; the case that sends vLLM's
// structured_outputs.disable_any_whitespace must be compact JSON.
func TestStructuredOutputsOpenAINode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPING the npm openai SDK test: node is not installed")
	}
	if _, err := os.Stat(filepath.Join(nodeClientDir, "node_modules", "openai")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `npm ci --prefix internal/llm/testdata/npm` (CI does)", nodeClientDir)
	}
	noLeaks(t)
	for _, model := range []string{"dummy", "stories260K"} {
		t.Run(model, func(t *testing.T) {
			cfg := testServeConfig()
			cfg.MaxModelLen = 512
			if model == "stories260K" {
				cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
			}
			url, stop := startServe(t, cfg)
			defer func() {
				if err := stop(); err != nil {
					t.Error(err)
				}
			}()
			lines := runNodeClient(t, node, url, servedModel(t, url))
			if len(lines) != 2 {
				t.Fatalf("%d results, want 2 (person, review)", len(lines))
			}
			for _, l := range lines {
				schema := compileSchema(t, string(l.Schema))
				if l.FinishReason != "stop" || !valid(schema)(l.Content) || string(l.Parsed) == "null" {
					t.Errorf("%s: finish %q, parsed %s, content %q does not validate against %s", l.Case, l.FinishReason, l.Parsed, l.Content, l.Schema)
				}
				var compact bytes.Buffer
				if err := json.Compact(&compact, []byte(l.Content)); l.Compact && (err != nil || compact.String() != l.Content) {
					t.Errorf("%s: disable_any_whitespace, yet the content %q has whitespace between JSON tokens", l.Case, l.Content)
				}
			}
		})
	}
}

// nodeResult is one line of parse.mjs's output.
type nodeResult struct {
	Case         string          `json:"case"`
	Schema       json.RawMessage `json:"schema"`
	Content      string          `json:"content"`
	Parsed       json.RawMessage `json:"parsed"`
	FinishReason string          `json:"finish_reason"`
	Compact      bool            `json:"compact"` // sent disable_any_whitespace
}

// runNodeClient runs parse.mjs against the server at url.
func runNodeClient(t *testing.T, node, url, model string) []nodeResult {
	t.Helper()
	var res []nodeResult
	for _, line := range runNodeScript(t, node, nodeClientDir, "parse.mjs", url, model) {
		var r nodeResult
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		res = append(res, r)
	}
	return res
}

// runNodeScript runs `node script` in dir against the server at url
// (OPENAI_BASE_URL, MODEL) and returns its output lines; a failing
// script fails the test with its output.
// The timeout guards against a hang only: under -race on a loaded 2-core
// host one script's two conversations have taken over two minutes.
func runNodeScript(t *testing.T, node, dir, script, url, model string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+url+"/v1", "MODEL="+model)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s%s", script, err, out, stderr.String())
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	return lines
}

// servedModel is the id GET /v1/models lists first.
func servedModel(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) == 0 {
		t.Fatalf("GET /v1/models: %v %+v", err, list)
	}
	return list.Data[0].ID
}
