package constraint

import (
	"strings"
	"testing"
)

// TestMaskAgreesWithAllowed checks the mask shortcuts (text targets, text
// tokens by character count, the trie of the longer text tokens) against
// Allowed, which runs each token's bytes through the automaton one by one:
// with the Llama-3 vocabulary, at every token of an output, every token id
// must be in the mask exactly when Allowed says so. The outputs reach the
// ends of counted strings (maxLength 40 > the chain bound, minLength), and
// pass multi-byte characters and unconstrained strings.
func TestMaskAgreesWithAllowed(t *testing.T) {
	tok, m := llama3Matcher(t)
	tests := []struct{ name, schema, output string }{
		{"maxLength 40", `{"type":"string","maxLength":40}`, `"` + strings.Repeat("ab cd é ", 5) + `"`},
		{"minLength and maxLength", `{"type":"object","properties":{"k":{"type":"string","minLength":20,"maxLength":22}},"required":["k"]}`, `{"k":"` + strings.Repeat("xyz", 7) + `"}`},
		{"short counted string in an array", `{"type":"array","items":{"type":"string","maxLength":3}}`, `["ab","ü€","a b"]`},
		{"open string and keys", `{"type":"object","properties":{"name":{"type":"string"}}}`, `{"name":"` + strings.Repeat("hello world ", 4) + `","other":"x"}`},
	}
	mask := make([]uint64, m.MaskWords())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := JSONSchema([]byte(tt.schema), Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := c.NewState(m)
			for i, id := range tok.Encode(tt.output, false) {
				s.Mask(mask)
				for tid := range int32(m.Size()) {
					if in := mask[tid>>6]&(1<<(tid&63)) != 0; in != s.Allowed(tid) {
						t.Fatalf("token %d of the output: mask says %v for token %d %q, Allowed disagrees", i, in, tid, m.tokens[tid])
					}
				}
				if err := s.Advance(id); err != nil {
					t.Fatalf("token %d %q of a valid output: %v", i, m.tokens[id], err)
				}
			}
			if !s.IsAccepting() {
				t.Fatal("the valid output is not accepted")
			}
		})
	}
}
