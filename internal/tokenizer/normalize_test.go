package tokenizer

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name  string
		steps []normStep
		in    string
		want  string
	}{
		{"NFC composes", []normStep{{kind: normUnicode, form: unicodeForms["NFC"]}}, "e\u0301te\u0301", "\u00e9t\u00e9"},
		{"NFD decomposes", []normStep{{kind: normUnicode, form: unicodeForms["NFD"]}}, "\u00e9", "e\u0301"},
		{"NFKC folds compatibility forms", []normStep{{kind: normUnicode, form: unicodeForms["NFKC"]}}, "\ufb01 \uff26\uff35\uff2c\uff2c \u2460", "fi FULL 1"},
		{"NFKD", []normStep{{kind: normUnicode, form: unicodeForms["NFKD"]}}, "\u00bd\u00e9", "1\u20442e\u0301"},
		{"Lowercase", []normStep{{kind: normLowercase}}, "HeLLo ÀÉ Σ", "hello àé σ"},
		{"Replace", []normStep{{kind: normReplace, old: "``", new: "\""}}, "``a`` `", "\"a\" `"},
		{"Prepend", []normStep{{kind: normPrepend, new: "▁"}}, "a", "▁a"},
		{"Prepend leaves empty text", []normStep{{kind: normPrepend, new: "▁"}}, "", ""},
		{"Strip both", []normStep{{kind: normStrip, left: true, right: true}}, " \t a b \n", "a b"},
		{"Strip left", []normStep{{kind: normStrip, left: true}}, "  a ", "a "},
		{"in order", []normStep{{kind: normUnicode, form: unicodeForms["NFKC"]}, {kind: normLowercase}, {kind: normReplace, old: " ", new: "_"}}, "\uff26\uff35\uff2c\uff2c Width", "full_width"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := normalize(tc.steps, tc.in); got != tc.want {
				t.Fatalf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestLoadHFNormalizer: a tokenizer.json's normalizer runs before the
// pre-tokenizer, on each text segment between added tokens.
func TestLoadHFNormalizer(t *testing.T) {
	dir := writeHFDir(t, func(tj map[string]any) {
		tj["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "NFKC"},
			map[string]any{"type": "Lowercase"},
			map[string]any{"type": "Strip", "strip_left": true, "strip_right": false},
		}}
	}, map[string]string{})
	tok, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"  \uff28\uff25\uff2c\uff2c\uff2f", "HELLO", "hello"} {
		if got, want := tok.Encode(in, false), []int32{259}; !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", in, got, want)
		}
	}
	if got, want := tok.Encode(" HELLO<|eot|> HELLO", false), []int32{259, 263, 259}; !slices.Equal(got, want) {
		t.Errorf("Encode around an added token = %v, want %v", got, want)
	}
}
