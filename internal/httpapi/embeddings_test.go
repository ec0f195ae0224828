package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
)

// embeddingReply is OpenAI's embeddings response, with each vector kept
// raw (a JSON array, or a base64 string).
type embeddingReply struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Index     int             `json:"index"`
		Object    string          `json:"object"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func embed(t *testing.T, srv *httptest.Server, body string) embeddingReply {
	t.Helper()
	r := do(t, srv, "POST", "/v1/embeddings", body)
	var e embeddingReply
	if err := json.Unmarshal(r.body, &e); err != nil || r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", body, r.status, r.body)
	}
	if e.Object != "list" || !strings.HasPrefix(e.ID, "embd-") {
		t.Fatalf("%s: %s", body, r.body)
	}
	for i, d := range e.Data {
		if d.Index != i || d.Object != "embedding" {
			t.Fatalf("%s: data[%d] = %+v", body, i, d)
		}
	}
	return e
}

// floats reads a JSON array vector.
func floats(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("embedding %s: %v", raw, err)
	}
	return v
}

// unbase64 reads a base64 vector of float32 in the given byte order.
func unbase64(t *testing.T, raw json.RawMessage, order binary.ByteOrder) []float32 {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("embedding %s: %v", raw, err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("base64 %q: %v", s, err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(order.Uint32(b[4*i:]))
	}
	return v
}

func norm(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// TestEmbeddingsRealEngine drives /v1/embeddings on the real engine (the
// built-in random model): every input form gives the same vector for the
// same tokens, unit norm by default (not with normalize false), identical
// inputs in one request and alone are the same bits, base64 is the
// float32 bytes little-endian (big with endianness big), usage counts the
// tokens as /tokenize does, and the official Go SDK reads the reply.
func TestEmbeddingsRealEngine(t *testing.T) {
	s, err := New(Config{ServedModelNames: []string{model}}, newRealEngine(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	var tk struct {
		Tokens []int32 `json:"tokens"`
	}
	json.Unmarshal(do(t, srv, "POST", "/tokenize", `{"prompt":"hello world"}`).body, &tk)
	ids, _ := json.Marshal(tk.Tokens)

	batch := embed(t, srv, `{"model":"`+model+`","input":["hello world","abc","hello world"],"user":"u1"}`)
	v0, v1, v2 := floats(t, batch.Data[0].Embedding), floats(t, batch.Data[1].Embedding), floats(t, batch.Data[2].Embedding)
	if !slices.Equal(v0, v2) || slices.Equal(v0, v1) || len(batch.Data) != 3 {
		t.Fatal("identical inputs differ, or different inputs agree")
	}
	if math.Abs(norm(v0)-1) > 1e-6 || math.Abs(norm(v1)-1) > 1e-6 {
		t.Fatalf("norms %g %g, want 1 (normalized by default)", norm(v0), norm(v1))
	}
	abcTokens := len(s.tok.Encode("abc", true))
	if want := 2*len(tk.Tokens) + abcTokens; batch.Usage.PromptTokens != want || batch.Usage.TotalTokens != want {
		t.Fatalf("usage %+v, want %d tokens", batch.Usage, want)
	}
	for _, body := range []string{`{"input":"hello world"}`, `{"input":` + string(ids) + `}`, `{"input":[` + string(ids) + `]}`} {
		if got := floats(t, embed(t, srv, body).Data[0].Embedding); !slices.Equal(got, v0) {
			t.Errorf("%s: another vector than in the batch", body)
		}
	}
	b64 := embed(t, srv, `{"input":["hello world","abc"],"encoding_format":"base64"}`)
	if !slices.Equal(unbase64(t, b64.Data[0].Embedding, binary.LittleEndian), v0) || !slices.Equal(unbase64(t, b64.Data[1].Embedding, binary.LittleEndian), v1) {
		t.Fatal("base64 is not the little-endian float32 bytes of the vector")
	}
	big := embed(t, srv, `{"input":"hello world","encoding_format":"base64","endianness":"big"}`)
	if !slices.Equal(unbase64(t, big.Data[0].Embedding, binary.BigEndian), v0) {
		t.Fatal("endianness big")
	}
	raw := floats(t, embed(t, srv, `{"input":"hello world","normalize":false}`).Data[0].Embedding)
	if n := norm(raw); math.Abs(n-1) < 1e-3 {
		t.Fatalf("normalize false gave norm %g", n)
	}
	for i := range raw {
		if d := math.Abs(float64(raw[i])/norm(raw) - float64(v0[i])); d > 1e-6 {
			t.Fatalf("the raw vector is not the normalized one scaled (%d: %g)", i, d)
		}
	}
	client := newSDKClient(srv.URL, "")
	got, err := client.Embeddings.New(context.Background(), sdk.EmbeddingNewParams{
		Model: model, Input: sdk.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"abc", "hello world"}},
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatFloat, User: sdk.String("u2"),
	})
	if err != nil || len(got.Data) != 2 || got.Usage.PromptTokens != int64(len(tk.Tokens)+abcTokens) {
		t.Fatalf("SDK: %v %+v", err, got)
	}
	for i, want := range [][]float32{v1, v0} {
		for j, x := range got.Data[i].Embedding {
			if float32(x) != want[j] {
				t.Fatalf("SDK data[%d][%d] = %v, want %v", i, j, x, want[j])
			}
		}
	}
}

// TestEmbeddingsFields: every field of the request is honoured or refused
// with a 400 naming it (OpenAI's: dimensions refused, the model has a
// fixed size; vLLM's extras).
func TestEmbeddingsFields(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, nil)
	long := strings.Repeat("x ", 300)
	tests := []struct {
		body   string
		status int
		param  string
	}{
		{`{"input":"a","dimensions":8}`, 400, "dimensions"},
		{`{"input":"a","encoding_format":"bytes"}`, 400, "encoding_format"},
		{`{"input":"a","embed_dtype":"float16"}`, 400, "embed_dtype"},
		{`{"input":"a","endianness":"middle"}`, 400, "endianness"},
		{`{}`, 400, "input"},
		{`{"input":[]}`, 400, "input"},
		{`{"input":""}`, 400, "input"},
		{`{"input":["a",""]}`, 400, "input"},
		{`{"input":[[1,-1]]}`, 400, "input"},
		{`{"input":[1,99999]}`, 400, "input"},
		{`{"input":{"a":1}}`, 400, "input"},
		{`{"input":"` + long + `"}`, 400, "input"},
		{`{"input":"a","foo":1}`, 400, "foo"},
		{`{"input":"a","cache_salt":"s"}`, 400, "cache_salt"},
		{`{"input":"a","mm_processor_kwargs":{"x":1}}`, 400, "mm_processor_kwargs"},
		{`{"input":"a","priority":3}`, 400, "priority"},
		{`{"input":"a","truncate_prompt_tokens":0}`, 400, "truncate_prompt_tokens"},
		{`{"input":"a","truncate_prompt_tokens":-2}`, 400, "truncate_prompt_tokens"},
		{`{"input":"a","model":"nope"}`, 404, "model"},
		{`{"input":"a","model":"alias","user":"someone","encoding_format":"float","embed_dtype":"float32","endianness":"native","dimensions":null}`, 200, ""},
	}
	for _, tt := range tests {
		r := do(t, srv, "POST", "/v1/embeddings", tt.body)
		var env struct {
			Error struct {
				Param *string `json:"param"`
			} `json:"error"`
		}
		json.Unmarshal(r.body, &env)
		if r.status != tt.status || tt.param != "" && (env.Error.Param == nil || *env.Error.Param != tt.param) {
			t.Errorf("%.80s: %d %s, want %d naming %q", tt.body, r.status, r.body, tt.status, tt.param)
		}
	}
	if f.calls.Load() != 1 {
		t.Fatalf("%d requests reached the engine, want the one valid request", f.calls.Load())
	}
}

// TestEmbeddingsRequestOptions: truncate_prompt_tokens keeps the input's
// last tokens (-1: up to the context), add_special_tokens false drops BOS,
// request_id and X-Request-Id name the response, usage follows.
func TestEmbeddingsRequestOptions(t *testing.T) {
	f := newFake()
	f.recordAll = true
	srv := newTestServer(t, f, nil)
	tests := []struct {
		body, header, id string
		tokens           int
	}{
		{`{"input":"abcdef","truncate_prompt_tokens":2}`, "", "", 2},
		{`{"input":"abcdef","truncate_prompt_tokens":-1}`, "", "", 7},
		{`{"input":"abcdef","add_special_tokens":false}`, "", "", 6},
		{`{"input":"abcdef","request_id":"mine"}`, "", "embd-mine", 7},
		{`{"input":["ab","cd"],"request_id":"mine"}`, "hdr", "embd-hdr", 6},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.header != "" {
			hdr = []string{"X-Request-Id", tt.header}
		}
		r := do(t, srv, "POST", "/v1/embeddings", tt.body, hdr...)
		var e embeddingReply
		if err := json.Unmarshal(r.body, &e); err != nil || r.status != 200 || e.Usage.PromptTokens != tt.tokens || tt.id != "" && e.ID != tt.id {
			t.Errorf("%s: %d %s", tt.body, r.status, r.body)
		}
	}
}

// TestRunner: with vLLM's --runner pooling only /v1/embeddings is served
// and generation answers vLLM's 400 "The model does not support
// Completions API"; with --runner generate it is the other way round.
func TestRunner(t *testing.T) {
	tests := []struct {
		runner, path, body string
		status             int
		contains           string
	}{
		{RunnerPooling, "/v1/embeddings", `{"input":"a"}`, 200, `"object":"list"`},
		{RunnerPooling, "/v1/completions", `{"prompt":"a"}`, 400, "does not support Completions API"},
		{RunnerPooling, "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}]}`, 400, "does not support Chat Completions API"},
		{RunnerGenerate, "/v1/embeddings", `{"input":"a"}`, 400, "does not support Embeddings API"},
		{RunnerGenerate, "/v1/completions", `{"prompt":"a","max_tokens":1}`, 200, `"text_completion"`},
		{"", "/v1/embeddings", `{"input":"a"}`, 200, `"object":"list"`},
	}
	for _, tt := range tests {
		srv := newTestServer(t, newFake(), func(c *Config) { c.Runner = tt.runner })
		r := do(t, srv, "POST", tt.path, tt.body)
		if r.status != tt.status || !strings.Contains(string(r.body), tt.contains) || tt.status == 400 && !strings.Contains(string(r.body), `"param":"model"`) {
			t.Errorf("runner %q %s: %d %s", tt.runner, tt.path, r.status, r.body)
		}
	}
	if _, err := New(Config{ServedModelNames: []string{model}, Runner: "draft"}, newFake()); err == nil {
		t.Error("an unknown runner was accepted")
	}
}
