package openai

import (
	"bytes"
	"errors"
	"testing"

	"govllm/internal/apierr"
	"govllm/internal/sampling"
)

// FuzzDecode: no body makes decoding or conversion panic, and every
// failure is an *apierr.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"a","max_tokens":3,"stop":["x"],"n":2}`, `{"prompt":[1,2],"logprobs":2}`, `{"prompt":[[1]]}`,
		`{"prompt":["a","b"]}`, `{"prompt":[[1],[2,3]]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"logprobs":true,"top_logprobs":3}`,
		`{"prompt":"a","temperature":1e39}`, `{"stop":null,"prompt":null}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(err error) {
			var pe *apierr.Error
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		}
		var c CompletionRequest
		if err := Decode(bytes.NewReader(body), &c); err != nil {
			check(err)
		} else if p, err := c.SamplingParams(sampling.Default()); err != nil {
			check(err)
		} else {
			check(validate(p))
		}
		var ch ChatCompletionRequest
		if err := Decode(bytes.NewReader(body), &ch); err != nil {
			check(err)
		} else if p, err := ch.SamplingParams(sampling.Default()); err != nil {
			check(err)
		} else {
			check(validate(p))
		}
	})
}

// validate runs sampling's checks on p, with an open max_tokens (0) filled
// as the engine fills it.
func validate(p sampling.Params) error {
	if p.MaxTokens == 0 {
		p.MaxTokens = 60
	}
	return p.Validate()
}
