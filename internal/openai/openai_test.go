package openai

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
	"govllm/internal/stats"
)

func TestDecodeCompletionErrors(t *testing.T) {
	tests := []struct {
		name, body, param, msg string
	}{
		{"empty", ``, "", "empty"},
		{"not object", `[1,2]`, "", "JSON object"},
		{"syntax", `{"prompt": "a",}`, "", "malformed JSON"},
		{"truncated", `{"prompt": "a"`, "", "malformed JSON"},
		{"trailing", `{"prompt": "a"} {}`, "", "after the top-level"},
		{"temperature string", `{"prompt":"a","temperature":"hot"}`, "temperature", "number"},
		{"n float", `{"prompt":"a","n":1.5}`, "n", "integer"},
		{"max_tokens string", `{"prompt":"a","max_tokens":"10"}`, "max_tokens", "integer"},
		{"stream string", `{"prompt":"a","stream":"yes"}`, "stream", "boolean"},
		{"stop number", `{"prompt":"a","stop":5}`, "stop", "string"},
		{"prompt object", `{"prompt":{"a":1}}`, "prompt", "string"},
		{"prompt float ids", `{"prompt":[1.5,2]}`, "prompt", "int32"},
		{"prompt huge id", `{"prompt":[99999999999]}`, "prompt", "int32"},
		{"stop_token_ids strings", `{"prompt":"a","stop_token_ids":["x"]}`, "stop_token_ids", "integer"},
		{"seed string", `{"prompt":"a","seed":"x"}`, "seed", "integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r CompletionRequest
			err := Decode(strings.NewReader(tt.body), &r)
			var pe *apierr.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *apierr.Error", err, err)
			}
			if pe.Param != tt.param || !strings.Contains(pe.Error(), tt.msg) {
				t.Fatalf("got param %q msg %q, want param %q containing %q", pe.Param, pe.Error(), tt.param, tt.msg)
			}
		})
	}
}

func TestPromptShapes(t *testing.T) {
	text := func(ts ...string) Prompt {
		p := Prompt{}
		for _, s := range ts {
			p = append(p, PromptInput{Text: s})
		}
		return p
	}
	toks := func(ls ...[]int32) Prompt {
		p := Prompt{}
		for _, l := range ls {
			p = append(p, PromptInput{TokenIDs: l, IsTokens: true})
		}
		return p
	}
	many := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`"x",`, n), ",") + "]"
	}
	tests := []struct {
		name, body string
		want       Prompt
		wantErr    string // Validate's error ("" = valid)
	}{
		{"string", `"hi"`, text("hi"), ""},
		{"one string in an array", `["hi"]`, text("hi"), ""},
		{"token ids", `[1,2,3]`, toks([]int32{1, 2, 3}), ""},
		{"one token array", `[[1,2]]`, toks([]int32{1, 2}), ""},
		{"strings", `["a","b","c"]`, text("a", "b", "c"), ""},
		{"token arrays", `[[1],[2,3]]`, toks([]int32{1}, []int32{2, 3}), ""},
		{"at the cap", many(MaxPrompts), nil, ""},
		{"above the cap", many(MaxPrompts + 1), nil, "at most 256"},
		{"empty string", `""`, text(""), "invalid prompt: must not be empty"},
		{"empty string among several", `["a","","c"]`, text("a", "", "c"), "invalid prompt: prompt[1]: must not be empty"},
		{"empty token array among several", `[[1],[2],[]]`, toks([]int32{1}, []int32{2}, []int32{}), "prompt[2]: must not be empty"},
		{"null", `null`, nil, "required"},
		{"negative id", `[-1]`, toks([]int32{-1}), "invalid prompt: token ids must be non-negative, got -1"},
		{"negative id in the second prompt", `[[1],[2,-5]]`, toks([]int32{1}, []int32{2, -5}), "prompt[1]: token ids must be non-negative, got -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Prompt
			if err := json.Unmarshal([]byte(tt.body), &p); err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && !reflect.DeepEqual(p, tt.want) {
				t.Fatalf("got %+v, want %+v", p, tt.want)
			}
			err := p.Validate()
			var pe *apierr.Error
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (!errors.As(err, &pe) || pe.Param != "prompt" || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPromptDecodeErrors(t *testing.T) {
	tests := []struct{ name, body, msg string }{
		{"empty array", `{"prompt":[]}`, "must not be empty"},
		{"object", `{"prompt":{"a":1}}`, "array of arrays of token ids"},
		{"number", `{"prompt":5}`, "array of arrays of token ids"},
		{"string then ids", `{"prompt":["a",[1]]}`, "array of arrays of token ids"},
		{"string then number", `{"prompt":["a",1]}`, "array of arrays of token ids"},
		{"ids then string", `{"prompt":[1,"a"]}`, "int32"},
		{"arrays then string", `{"prompt":[[1],"a"]}`, "int32"},
		{"arrays then id", `{"prompt":[[1],2]}`, "int32"},
		{"float in second array", `{"prompt":[[1],[2.5]]}`, "int32"},
		{"nested too deep", `{"prompt":[[[1]]]}`, "int32"},
		{"null element", `{"prompt":["a",null]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r CompletionRequest
			err := Decode(strings.NewReader(tt.body), &r)
			if tt.msg == "" { // encoding/json accepts it; Validate must then reject it
				if err == nil {
					err = r.Prompt.Validate()
				}
			}
			var pe *apierr.Error
			if !errors.As(err, &pe) || pe.Param != "prompt" || !strings.Contains(pe.Error(), tt.msg) {
				t.Fatalf("err = %v, want a prompt error containing %q", err, tt.msg)
			}
		})
	}
}

func TestCompletionSamplingParams(t *testing.T) {
	body := `{"model":"m","prompt":"x","n":2,"max_tokens":7,"temperature":0.5,"top_p":0.9,"top_k":5,"min_p":0.1,
	"presence_penalty":0.5,"frequency_penalty":-0.5,"repetition_penalty":1.2,"seed":42,"stop":"END",
	"stop_token_ids":[9],"min_tokens":2,"ignore_eos":true,"include_stop_str_in_output":true,"logprobs":3}`
	var r CompletionRequest
	if err := Decode(strings.NewReader(body), &r); err != nil {
		t.Fatal(err)
	}
	base := sampling.Default()
	base.StopTokenIDs = []int32{100}
	p, err := r.SamplingParams(base)
	if err != nil {
		t.Fatal(err)
	}
	seed, lp := int64(42), 3
	want := sampling.Params{N: 2, Temperature: 0.5, TopP: 0.9, TopK: 5, MinP: 0.1, PresencePenalty: 0.5, FrequencyPenalty: -0.5,
		RepetitionPenalty: 1.2, Seed: &seed, MaxTokens: 7, MinTokens: 2, StopTokenIDs: []int32{100, 9}, Stop: []string{"END"},
		IncludeStopStrInOutput: true, IgnoreEOS: true, Logprobs: &lp}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	if !reflect.DeepEqual(base.StopTokenIDs, []int32{100}) {
		t.Fatalf("base mutated: %v", base.StopTokenIDs)
	}
	// Defaults: max_tokens 16, base temperature.
	r = CompletionRequest{}
	_ = Decode(strings.NewReader(`{"prompt":"x"}`), &r)
	p, err = r.SamplingParams(sampling.Default())
	if err != nil || p.MaxTokens != 16 || p.Temperature != 1 || p.Logprobs != nil {
		t.Fatalf("defaults: %+v, %v", p, err)
	}
}

func TestChatSamplingParams(t *testing.T) {
	tests := []struct {
		name, body, param string
		maxTokens         int
		logprobs          *int
	}{
		{"defaults", `{"messages":[{"role":"user","content":"hi"}]}`, "", 0, nil},
		{"max_completion_tokens wins", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"max_completion_tokens":5}`, "", 5, nil},
		{"logprobs", `{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":2}`, "", 0, ptr(2)},
		{"logprobs no top", `{"messages":[{"role":"user","content":"hi"}],"logprobs":true}`, "", 0, ptr(0)},
		{"top without logprobs", `{"messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`, "top_logprobs", 0, nil},
		{"top below -1 (the cap is the server's: llm.Limits)", `{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":-2}`, "top_logprobs", 0, nil},
		{"no messages", `{"messages":[]}`, "messages", 0, nil},
		{"bad role", `{"messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role", 0, nil},
		{"unknown response_format type", `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"xml"}}`, "response_format", 0, nil},
		{"max_tokens zero", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, "max_tokens", 0, nil},
		{"logit_bias", `{"messages":[{"role":"user","content":"hi"}],"logit_bias":{"5":1}}`, "", 0, nil},
		{"logit_bias key not an id", `{"messages":[{"role":"user","content":"hi"}],"logit_bias":{"x5":1}}`, "logit_bias", 0, nil},
		{"nan-free", `{"messages":[{"role":"user","content":"hi"}],"temperature":1e300}`, "temperature", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ChatCompletionRequest
			if err := Decode(strings.NewReader(tt.body), &r); err != nil {
				t.Fatal(err)
			}
			p, err := r.SamplingParams(sampling.Default())
			if tt.param != "" {
				var pe *apierr.Error
				if !errors.As(err, &pe) || pe.Param != tt.param {
					t.Fatalf("err = %v, want param %q", err, tt.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.MaxTokens != tt.maxTokens || !reflect.DeepEqual(p.Logprobs, tt.logprobs) {
				t.Fatalf("got max_tokens %d logprobs %v", p.MaxTokens, p.Logprobs)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestChatContentParts(t *testing.T) {
	var r ChatCompletionRequest
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null}]}`
	if err := Decode(strings.NewReader(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Messages[0].Content != "a\nb" || r.Messages[1].Content != "" {
		t.Fatalf("got %+v", r.Messages)
	}
	if err := Decode(strings.NewReader(`{"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`), &r); err != nil {
		t.Fatal(err)
	}
	var pe *apierr.Error
	if err := CheckMessages(r.Messages); !errors.As(err, &pe) || pe.Param != "messages[1].content[0].type" {
		t.Fatalf("image part: %v", err)
	}
}

func TestLogprobsConversion(t *testing.T) {
	pieces := map[int32]string{1: "a", 2: " bc", 3: "é"}
	piece := func(id int32) string { return pieces[id] }
	lps := []sampling.Logprobs{
		{Sampled: sampling.TokenLogprob{Token: 1, Logprob: -0.5}, Rank: 1, Top: []sampling.TokenLogprob{{Token: 1, Logprob: -0.5}, {Token: 2, Logprob: -1}}},
		{Sampled: sampling.TokenLogprob{Token: 3, Logprob: float32(math.Inf(-1))}, Rank: 3, Top: []sampling.TokenLogprob{{Token: 2, Logprob: -0.1}}},
		{Sampled: sampling.TokenLogprob{Token: 2, Logprob: -2}, Rank: 2}, // logprobs=0: the sampled token only
	}
	c, off := CompletionLogprobsFrom(lps, piece, 5)
	want := &CompletionLogprobs{
		Tokens:        []string{"a", "é", " bc"},
		TokenLogprobs: []*float64{ptr(-0.5), ptr(MinLogprob), ptr(-2.0)},
		TopLogprobs:   []TopLogprobs{{{"a", -0.5}, {" bc", -1}}, {{" bc", -0.10000000149011612}, {"é", MinLogprob}}, {{" bc", -2}}},
		TextOffset:    []int{5, 6, 8},
	}
	if !reflect.DeepEqual(c, want) || off != 11 {
		t.Fatalf("got %+v off %d", c, off)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	// The keys keep rank order (encoding/json would sort " bc" before "a").
	if !strings.Contains(string(b), `"top_logprobs":[{"a":-0.5," bc":-1},{" bc":-0.10000000149011612,"é":-9999},{" bc":-2}]`) {
		t.Fatalf("JSON %s", b)
	}
	var back CompletionLogprobs
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, want) {
		t.Fatalf("round trip %+v: %v", back, err)
	}
	ch := ChatLogprobsFrom(lps, piece)
	if len(ch.Content) != 3 || ch.Content[1].Token != "é" || !reflect.DeepEqual(ch.Content[1].Bytes, []int{0xc3, 0xa9}) ||
		len(ch.Content[0].TopLogprobs) != 2 || ch.Content[1].Logprob != MinLogprob {
		t.Fatalf("chat logprobs %+v", ch)
	}
}

func TestFinishReasonAndErrors(t *testing.T) {
	if FinishReason(stats.FinishNone) != nil || *FinishReason(stats.FinishLength) != "length" || *FinishReason(stats.FinishAbort) != "abort" {
		t.Fatal("finish reasons")
	}
	b, _ := json.Marshal(NewError(400, "", "bad"))
	if string(b) != `{"error":{"message":"bad","type":"BadRequestError","param":null,"code":400}}` {
		t.Fatalf("envelope %s", b)
	}
	b, _ = json.Marshal(NewError(404, "model", "no such model"))
	if string(b) != `{"error":{"message":"no such model","type":"NotFoundError","param":"model","code":404}}` {
		t.Fatalf("envelope %s", b)
	}
}
