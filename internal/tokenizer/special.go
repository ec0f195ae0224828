package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// specialTok is a token recognised when written in input text.
type specialTok struct {
	s      string
	id     int32
	lstrip bool // also consumes the whitespace on its left
	rstrip bool // also consumes the whitespace on its right
}

// specialMatcher finds special tokens in text, leftmost-longest (as the Hugging
// Face added-vocabulary matcher), with a byte trie: Llama 3's 256 special
// tokens all start with "<|", so trying each in turn at every '<' is slow.
type specialMatcher struct {
	first [256]bool
	nodes []trieNode // nodes[0] is the root
	toks  []specialTok
}

type trieNode struct {
	edges []trieEdge
	tok   int32 // index into toks; -1: no token ends here
}

type trieEdge struct {
	b    byte
	next int32
}

func (n *trieNode) child(b byte) int32 {
	for _, e := range n.edges {
		if e.b == b {
			return e.next
		}
	}
	return -1
}

func (m *specialMatcher) add(s specialTok) {
	if s.s == "" {
		return
	}
	if m.nodes == nil {
		m.nodes = []trieNode{{tok: -1}}
	}
	n := int32(0)
	for i := 0; i < len(s.s); i++ {
		c := m.nodes[n].child(s.s[i])
		if c < 0 {
			c = int32(len(m.nodes))
			m.nodes = append(m.nodes, trieNode{tok: -1})
			m.nodes[n].edges = append(m.nodes[n].edges, trieEdge{b: s.s[i], next: c})
		}
		n = c
	}
	if m.nodes[n].tok < 0 {
		m.nodes[n].tok = int32(len(m.toks))
		m.toks = append(m.toks, s)
	}
	m.first[s.s[0]] = true
}

// find returns the byte span [start, end) of the first special token in
// text and its id; start is -1 when there is none.
func (m *specialMatcher) find(text string) (start, end int, id int32) {
	for i := 0; i < len(text); i++ {
		if !m.first[text[i]] {
			continue
		}
		best, bestEnd := int32(-1), 0
		for n, j := int32(0), i; j < len(text); j++ {
			if n = m.nodes[n].child(text[j]); n < 0 {
				break
			}
			if tok := m.nodes[n].tok; tok >= 0 {
				best, bestEnd = tok, j+1
			}
		}
		if best < 0 {
			continue
		}
		s := &m.toks[best]
		start, end = i, bestEnd
		if s.lstrip {
			for start > 0 {
				r, n := utf8.DecodeLastRuneInString(text[:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= n
			}
		}
		if s.rstrip {
			for end < len(text) {
				r, n := utf8.DecodeRuneInString(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += n
			}
		}
		return start, end, s.id
	}
	return -1, -1, -1
}
