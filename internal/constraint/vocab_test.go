package constraint

import (
	"slices"
	"testing"
)

// testVocab is a small vocabulary: ordinary tokens, then <s>, </s> (EOS).
type testVocab struct{ toks []string }

func (v testVocab) Size() int { return len(v.toks) + 2 }
func (v testVocab) TokenBytes(id int32) []byte {
	switch {
	case int(id) < len(v.toks):
		return []byte(v.toks[id])
	case int(id) == len(v.toks):
		return []byte("<s>")
	}
	return []byte("</s>")
}
func (v testVocab) IsSpecial(id int32) bool { return int(id) >= len(v.toks) }
func (v testVocab) EOSIDs() []int32         { return []int32{int32(len(v.toks) + 1)} }

// smallVocab has single bytes, multi-terminal tokens and split UTF-8.
var smallVocab = testVocab{toks: []string{
	"a", "b", "c", "ab", "abc", "0", "1", "12", "-", "\"", "{", "}", ":", ",", "[", "]",
	"{\"", "\":", "\":\"", "\",\"", " ", "  ", "\n", "true", "false", "null", "é", "\xc3", "\xa9",
	"x", "y", "z", "\\", "n", "u", ".", "e", "5", "9", "00", "<s>", "\t",
}}

func testMatcher(t testing.TB) *Matcher {
	m, err := NewMatcher(smallVocab)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// allowedStrings lists the ordinary tokens (and "EOS") the mask allows.
func allowedStrings(m *Matcher, s *State, v testVocab) []string {
	mask := make([]uint64, m.MaskWords())
	s.Mask(mask)
	var out []string
	for id := range int32(v.Size()) {
		if mask[id>>6]&(1<<(id&63)) == 0 {
			continue
		}
		if slices.Contains(v.EOSIDs(), id) {
			out = append(out, "EOS")
		} else {
			out = append(out, string(v.TokenBytes(id)))
		}
		if !s.Allowed(id) {
			panic("Mask and Allowed disagree")
		}
	}
	return out
}

// tokenID finds a token of smallVocab by its text.
func tokenID(t testing.TB, s string) int32 {
	if s == "EOS" {
		return smallVocab.EOSIDs()[0]
	}
	i := slices.Index(smallVocab.toks, s)
	if i < 0 {
		t.Fatalf("no token %q", s)
	}
	return int32(i)
}

func TestTrieCoversEveryToken(t *testing.T) {
	m := testMatcher(t)
	seen := map[int32]bool{}
	for _, n := range m.full.nodes[1:] {
		for _, id := range m.full.toks[n.tokLo:n.tok] {
			seen[id] = true
		}
	}
	// every ordinary token once; "<s>" (special) and EOS never.
	if len(seen) != len(smallVocab.toks) {
		t.Fatalf("trie holds %d tokens, want %d", len(seen), len(smallVocab.toks))
	}
}

// TestBigSubtreeBitsets checks orSubtree's bitsets against the tokens
// whose bytes start with each large subtree's node bytes (found by
// prefix, not through the trie's token lists).
func TestBigSubtreeBitsets(t *testing.T) {
	_, m := llama3Matcher(t)
	if len(m.bigSub) == 0 {
		t.Fatal("no subtree of the Llama-3 trie has a bitset")
	}
	var path []byte
	for i := int32(1); i < int32(len(m.full.nodes)); i++ {
		n := &m.full.nodes[i]
		path = append(path[:n.depth-1], n.b)
		if m.bigSub[i] == nil {
			continue
		}
		all := make([]uint64, m.MaskWords())
		for w := range all {
			all[w] = ^uint64(0)
		}
		got := make([]uint64, m.MaskWords())
		m.orSubtree(&m.full, i, all, got)
		for id, b := range m.tokens {
			want := len(b) >= len(path) && string(b[:len(path)]) == string(path)
			if in := got[id>>6]&(1<<(id&63)) != 0; in != want {
				t.Fatalf("node %q: token %d %q: bitset says %v", path, id, b, in)
			}
		}
	}
}
