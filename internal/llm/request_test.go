package llm

import (
	"slices"
	"strings"
	"testing"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
	"govllm/internal/tokenizer"
)

func intp(v int) *int { return &v }

// TestPrepareRequestFields: the request fields the Preparer checks and
// applies. A case with param refuses the request naming it; otherwise
// want checks the prepared request.
func TestPrepareRequestFields(t *testing.T) {
	prompt := []int32{1, 10, 11, 12, 13}
	tests := []struct {
		name  string
		mod   func(r *Request)
		param string
		want  func(t *testing.T, got Request)
	}{
		{name: "truncate keeps the last tokens", mod: func(r *Request) { r.TruncatePromptTokens = intp(2) },
			want: func(t *testing.T, got Request) {
				if !slices.Equal(got.PromptTokenIDs, []int32{12, 13}) {
					t.Errorf("prompt %v, want [12 13]", got.PromptTokenIDs)
				}
			}},
		{name: "truncate above the prompt length", mod: func(r *Request) { r.TruncatePromptTokens = intp(50) },
			want: func(t *testing.T, got Request) {
				if !slices.Equal(got.PromptTokenIDs, prompt) {
					t.Errorf("prompt %v, want it whole", got.PromptTokenIDs)
				}
			}},
		{name: "truncate 0", mod: func(r *Request) { r.TruncatePromptTokens = intp(0) }, param: "truncate_prompt_tokens"},
		{name: "truncate above max-model-len", mod: func(r *Request) { r.TruncatePromptTokens = intp(65) }, param: "truncate_prompt_tokens"},
		{name: "logit_bias out of the vocabulary", mod: func(r *Request) { r.Params.LogitBias = map[int32]float32{512: 1} }, param: "logit_bias"},
		{name: "allowed_token_ids out of the vocabulary", mod: func(r *Request) { r.Params.AllowedTokenIDs = []int32{3, 600} }, param: "allowed_token_ids"},
		{name: "bad_words tokenized", mod: func(r *Request) { r.Params.BadWords = []string{"  hi"} },
			want: func(t *testing.T, got Request) {
				tok := tokenizer.NewDummy(512)
				if w := got.Params.BadWordsTokenIDs; len(w) == 0 || !slices.Equal(w[0], tok.Encode("hi", false)) {
					t.Errorf("bad words %v, want the tokens of \"hi\" first", w)
				}
			}},
		{name: "request id with a space", mod: func(r *Request) { r.ID = "a b" }, param: "request_id"},
		{name: "request id too long", mod: func(r *Request) { r.ID = strings.Repeat("x", MaxRequestIDLen+1) }, param: "request_id"},
	}
	pp, err := NewPreparer(tokenizer.NewDummy(512), 64, Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := sampling.Default()
			p.MaxTokens = 4
			r := Request{ID: "cmpl-1", PromptTokenIDs: prompt, Params: p}
			tc.mod(&r)
			prs, err := pp.Prepare(r)
			if tc.param != "" {
				if e, ok := err.(*apierr.Error); !ok || e.Param != tc.param {
					t.Fatalf("%v, want a 400 naming %s", err, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, prs[0].Request())
		})
	}
}
