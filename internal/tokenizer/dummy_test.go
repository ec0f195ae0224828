package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func TestDummy(t *testing.T) {
	tok := NewDummy(1000)
	if tok.VocabSize() != 1000 || tok.BOS() != 256 || tok.EOS() != 257 || tok.BOSToken() != "<s>" || tok.EOSToken() != "</s>" {
		t.Fatalf("vocab %d bos %d eos %d %q %q", tok.VocabSize(), tok.BOS(), tok.EOS(), tok.BOSToken(), tok.EOSToken())
	}
	seen := map[string]int32{}
	for id := int32(258); id < 1000; id++ {
		p := tok.Piece(id)
		if len(p) < 2 || len(p) > 9 || p[0] != ' ' || strings.TrimLeft(p[1:], "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("Piece(%d) = %q: want a short word with a leading space", id, p)
		}
		if prev, dup := seen[p]; dup {
			t.Fatalf("ids %d and %d both decode to %q", prev, id, p)
		}
		seen[p] = id
	}
	if got := NewDummy(1000).Piece(777); got != tok.Piece(777) {
		t.Fatal("dummy words are not deterministic")
	}
	tests := []struct {
		text       string
		addSpecial bool
		want       []int32
	}{
		{"hi", true, []int32{256, 'h', 'i'}},
		{"hi", false, []int32{'h', 'i'}},
		{"a</s>b", false, []int32{'a', 257, 'b'}},
		{"é", false, []int32{0xC3, 0xA9}},
		{"", true, []int32{256}},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got := tok.Encode(tc.text, tc.addSpecial)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Encode(%q, %v) = %v, want %v", tc.text, tc.addSpecial, got, tc.want)
			}
			if s := tok.Decode(got, true); s != tc.text && !strings.Contains(tc.text, "</s>") {
				t.Fatalf("Decode = %q", s)
			}
		})
	}
	if got := tok.Decode([]int32{256, 'o', 'k', 258, 259, 257}, true); got != "ok ba be" {
		t.Fatalf("Decode = %q", got)
	}
	if got := tok.Decode([]int32{256, 'o', 'k', 257}, false); got != "<s>ok</s>" {
		t.Fatalf("Decode(skipSpecial=false) = %q", got)
	}
}
