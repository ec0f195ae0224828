package specdec

import (
	"errors"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	ok := []struct {
		in   string
		want Config
	}{
		{`{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}`, Config{"ngram", "", 5, 4, 4}},
		{`{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 5, "prompt_lookup_min": 3}`, Config{"ngram", "", 3, 3, 5}},
		{`{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2}`, Config{"ngram", "", 2, 2, 2}},
		{`{"method": "ngram", "num_speculative_tokens": 4}`, Config{"ngram", "", 4, 5, 5}},
		{`{"model": "/m/draft.gguf", "num_speculative_tokens": 3}`, Config{"draft_model", "/m/draft.gguf", 3, 0, 0}},
		{`{"method": "draft_model", "model": "d.gguf", "num_speculative_tokens": 2}`, Config{"draft_model", "d.gguf", 2, 0, 0}},
	}
	for _, c := range ok {
		got, err := ParseConfig(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseConfig(%s) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, names string }{
		{`{"method": "ngram", "model": "/m/draft.gguf", "num_speculative_tokens": 4}`, `"model"`},
		{`{"method": "draft_model", "num_speculative_tokens": 4}`, `"model"`},
		{`{"model": "d.gguf", "num_speculative_tokens": 4, "prompt_lookup_max": 3}`, `prompt_lookup`},
		{`{"model": "d.gguf"}`, `"num_speculative_tokens"`},
		{`{"method": "eagle", "num_speculative_tokens": 4}`, `"eagle"`},
		{`{"num_speculative_tokens": 4}`, `"method"`},
		{`{"method": "ngram"}`, `"num_speculative_tokens"`},
		{`{"method": "ngram", "num_speculative_tokens": 0}`, `"num_speculative_tokens"`},
		{`{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 4, "prompt_lookup_max": 2}`, `"prompt_lookup_max"`},
		{`{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 0}`, `"prompt_lookup_min"`},
		{`{"method": "ngram", "num_speculative_tokens": 3, "acceptance_method": "x"}`, `acceptance_method`},
		{`{"method": "ngram", "num_speculative_tokens": 3, "disable_by_batch_size": 4}`, `disable_by_batch_size`},
		{`{"method": "ngram", "num_speculative_tokens": 3} {}`, `trailing`},
		{`not json`, `invalid`},
	}
	for _, c := range bad {
		_, err := ParseConfig(c.in)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("ParseConfig(%s) error = %v, want one naming %s", c.in, err, c.names)
		}
	}
}
