package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"govllm/internal/testmodels"
)

// clientsDir holds the real JavaScript clients run against the server
// (.ci/run installs them with npm ci).
var clientsDir = filepath.Join("..", "..", "internal", "httpapi", "testdata", "npm")

// TestEmbeddingsRealClients serves stories260K with `govllm serve` and runs
// the npm openai SDK's embeddings.create (its default asks for base64 and
// decodes it; then encoding_format float) and LangChain's
// OpenAIEmbeddings (embedDocuments, embedQuery; base64 too) against it: each returns
// the vectors the server gives as JSON floats, in input order, and the
// requests are counted in vllm:request_success_total{finished_reason="stop"}.
func TestEmbeddingsRealClients(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIPPING the embedding clients: node is not installed")
	}
	if _, err := os.Stat(filepath.Join(clientsDir, "node_modules")); err != nil {
		t.Skipf("SKIPPING the embedding clients: %s/node_modules is missing; run `npm ci --prefix internal/httpapi/testdata/npm`", clientsDir)
	}
	noLeaks(t)
	cfg := testServeConfig()
	cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	cfg.ServedModelNames = []string{"stories"}
	url, _ := startServe(t, cfg)

	texts := []string{"Once upon a time", "The cat sat on the mat.", "Once upon a time"}
	body, _ := json.Marshal(map[string]any{"model": "stories", "input": texts})
	resp, err := http.Post(url+"/v1/embeddings", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var direct struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	err = json.NewDecoder(resp.Body).Decode(&direct)
	resp.Body.Close()
	if err != nil || len(direct.Data) != 3 || len(direct.Data[0].Embedding) != 64 {
		t.Fatalf("direct request: %v %+v", err, direct)
	}

	cmd := exec.Command("node", "embed.mjs", url, "stories")
	cmd.Dir = clientsDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node embed.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		SDKDefault, SDKFloat, LCDocs [][]float64
		LCQuery                      []float64
		Usage                        struct{ Prompt_tokens, Total_tokens int }
		Object, Model                string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := make([][]float32, len(direct.Data))
	for i, d := range direct.Data {
		want[i] = d.Embedding
	}
	for name, vs := range map[string][][]float64{"openai SDK (base64)": got.SDKDefault, "openai SDK (float)": got.SDKFloat,
		"LangChain embedDocuments": got.LCDocs, "LangChain embedQuery": {got.LCQuery}} {
		w := want
		if name == "LangChain embedQuery" {
			w = want[1:2]
		}
		if !sameVectors(vs, w) {
			t.Errorf("%s: the vectors differ from the server's JSON floats", name)
		}
	}
	if got.Object != "list" || got.Model != "stories" || got.Usage.Prompt_tokens != direct.Usage.PromptTokens || got.Usage.Total_tokens != direct.Usage.PromptTokens {
		t.Errorf("openai SDK: object %q model %q usage %+v (direct: %d prompt tokens)", got.Object, got.Model, got.Usage, direct.Usage.PromptTokens)
	}
	sc := &scraper{url: url, hc: http.DefaultClient}
	// 3 inputs × (direct, SDK twice, embedDocuments) + embedQuery.
	if n := sc.scrape(t).sum("vllm:request_success_total", "finished_reason", "stop"); n != 13 {
		t.Errorf("vllm:request_success_total{finished_reason=\"stop\"} = %g, want 13", n)
	}
}

// sameVectors compares client vectors (float64) with the server's float32
// values: rounded to float32 they are the same bits (a float32 printed as
// JSON in its shortest form reads back as a nearby float64, which rounds
// to it; a base64 one decodes to exactly its value).
func sameVectors(got [][]float64, want [][]float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range got[i] {
			if float32(got[i][j]) != want[i][j] {
				return false
			}
		}
	}
	return true
}

// TestRunnerFlags: vLLM's --runner and --convert values, and the ones
// refused (vLLM's other conversions, and embed with the generate runner).
func TestRunnerFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // httpapi.Config.Runner; "error" when refused
	}{
		{nil, ""},
		{[]string{"--runner", "auto"}, ""},
		{[]string{"--runner", "generate"}, "generate"},
		{[]string{"--runner", "pooling"}, "pooling"},
		{[]string{"--convert", "embed"}, "pooling"},
		{[]string{"--convert", "none", "--runner", "generate"}, "generate"},
		{[]string{"--convert", "embed", "--runner", "generate"}, "error"},
		{[]string{"--convert", "classify"}, "error"},
		{[]string{"--runner", "draft"}, "error"},
	}
	for _, tt := range tests {
		c, err := parseServeArgs(tt.args, io.Discard)
		got := "error"
		if err == nil {
			got, err = c.apiRunner()
		}
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("%v: %q, want %q", tt.args, got, tt.want)
		}
	}
}
