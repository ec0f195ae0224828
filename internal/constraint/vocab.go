package constraint

import (
	"errors"
	"slices"
	"sync"
	"unicode/utf8"
)

// Vocabulary is what the matcher needs to know of a tokenizer.
type Vocabulary interface {
	// Size is the number of token ids (the mask has one bit per id).
	Size() int
	// TokenBytes is the bytes token id stands for in generated text: a
	// byte-fallback token its one byte, a byte-level token its raw bytes
	// (possibly partial UTF-8).
	TokenBytes(id int32) []byte
	// IsSpecial reports a control token (BOS, EOS, chat markers): never
	// allowed by a constraint, except the EOS ids when it can end.
	IsSpecial(id int32) bool
	// EOSIDs lists the ids that end generation.
	EOSIDs() []int32
}

// trieNode is one node of the token trie in preorder.
type trieNode struct {
	b          byte
	depth      int32 // 1 for a first byte
	end        int32 // the index after this node's subtree
	tokLo, tok int32 // tokens ending here: toks[tokLo:tok]
	// the tokens of the subtree: toks[subLo:subHi]
	subLo, subHi int32
	impure       bool // the subtree holds a token that is not string text
	textPath     bool // the node's bytes are string text (see isStringText)
}

// Matcher is a vocabulary prepared for masking: a trie of every ordinary
// token's bytes. It is immutable and safe for concurrent use; build one per
// vocabulary and share it.
type Matcher struct {
	size   int
	full   trie     // every ordinary token
	impure trie     // the tokens that are not string text (see isStringText)
	text   []uint64 // bitset of the string-text tokens
	// textUpTo[n] is the bitset of the string-text tokens of at most n
	// characters (n ≤ the longest one's count; textUpTo[last] is text).
	textUpTo [][]uint64
	long     trie // the string-text tokens of more than textChainMax characters
	eos      []int32
	tokens   [][]byte // by id; nil for special or empty tokens
	// bigSub holds, for each node of full with at least bigSubtree
	// tokens below it, the bitset of those tokens (see orSubtree).
	bigSub map[int32][]uint64

	loopMu    sync.Mutex
	byteLoops map[[4]uint64]*byteLoop // built on first use (see byteLoopOf)
}

// trie is a token trie in preorder; toks lists the tokens ending at each
// node (several ids may share bytes).
type trie struct {
	nodes []trieNode
	toks  []int32
	full  []int32 // by node: the node of the same bytes in Matcher.full (see mapTo)
}

// NewMatcher builds the token trie of v.
func NewMatcher(v Vocabulary) (*Matcher, error) {
	n := v.Size()
	if n <= 0 {
		return nil, errors.New("constraint: empty vocabulary")
	}
	m := &Matcher{size: n, tokens: make([][]byte, n)}
	ids := make([]int32, 0, n)
	for id := range int32(n) {
		if b := v.TokenBytes(id); len(b) > 0 && !v.IsSpecial(id) {
			m.tokens[id] = slices.Clone(b)
			ids = append(ids, id)
		}
	}
	for _, e := range v.EOSIDs() {
		if e >= 0 && int(e) < n {
			m.eos = append(m.eos, e)
			m.tokens[e] = nil
		}
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return slices.Compare(m.tokens[a], m.tokens[b]) })
	m.full.build(m.tokens, ids)
	m.full.markImpure(m.tokens)
	var impure []int32
	var byChars [][]int32 // text tokens by character count
	for _, id := range ids {
		if !isStringText(m.tokens[id]) {
			impure = append(impure, id)
			continue
		}
		n := utf8.RuneCount(m.tokens[id])
		for len(byChars) <= n {
			byChars = append(byChars, nil)
		}
		byChars[n] = append(byChars[n], id)
	}
	m.impure.build(m.tokens, impure)
	m.impure.mapTo(&m.full)
	m.buildTextUpTo(byChars)
	var long []int32
	for _, ids := range byChars[min(len(byChars), textChainMax+1):] {
		long = append(long, ids...)
	}
	slices.SortFunc(long, func(a, b int32) int { return slices.Compare(m.tokens[a], m.tokens[b]) })
	m.long.build(m.tokens, long)
	m.long.mapTo(&m.full)
	m.buildBigSub()
	return m, nil
}

// bigSubtree is the least number of tokens under a node of the whole trie
// for which orSubtree uses a bitset (one word per 64 ids) rather than
// the node's token list.
const bigSubtree = 4096

// buildBigSub fills bigSub.
func (m *Matcher) buildBigSub() {
	m.bigSub = map[int32][]uint64{}
	for i, n := range m.full.nodes[1:] {
		if n.subHi-n.subLo < bigSubtree {
			continue
		}
		bits := make([]uint64, m.MaskWords())
		for _, id := range m.full.toks[n.subLo:n.subHi] {
			bits[id>>6] |= 1 << (id & 63)
		}
		m.bigSub[int32(i+1)] = bits
	}
}

// orSubtree sets in dst the bits of src of the tokens under node i of tr
// (its own included).
func (m *Matcher) orSubtree(tr *trie, i int32, src, dst []uint64) {
	if sub := m.bigSub[i]; sub != nil && tr == &m.full {
		for w := range dst {
			dst[w] |= src[w] & sub[w]
		}
		return
	}
	n := &tr.nodes[i]
	for _, id := range tr.toks[n.subLo:n.subHi] {
		dst[id>>6] |= src[id>>6] & (1 << (id & 63))
	}
}

// mapTo fills t.full: for each node of t (a trie of some of full's
// tokens), the node of full with the same bytes.
func (t *trie) mapTo(full *trie) {
	t.full = make([]int32, len(t.nodes))
	var at [256]int32 // at[d]: the full node of t's current node at depth d
	for i := 1; i < len(t.nodes); i++ {
		n := &t.nodes[i]
		if int(n.depth) >= len(at) {
			t.full[i] = -1
			continue
		}
		p := at[n.depth-1]
		c := p + 1
		for full.nodes[c].b != n.b {
			c = full.nodes[c].end
		}
		t.full[i], at[n.depth] = c, c
	}
}

// buildTextUpTo fills textUpTo and text from the text tokens by character
// count.
func (m *Matcher) buildTextUpTo(byChars [][]int32) {
	cur := make([]uint64, m.MaskWords())
	m.textUpTo = [][]uint64{slices.Clone(cur)}
	for n := 1; n < len(byChars); n++ {
		for _, id := range byChars[n] {
			cur[id>>6] |= 1 << (id & 63)
		}
		m.textUpTo = append(m.textUpTo, slices.Clone(cur))
	}
	m.text = m.textUpTo[len(m.textUpTo)-1]
}

// maxTextChars is the character count of the longest text token.
func (m *Matcher) maxTextChars() int { return len(m.textUpTo) - 1 }

// markImpure flags each node whose subtree holds a token that is not
// string text.
func (m *trie) markImpure(tokens [][]byte) {
	for i := len(m.nodes) - 1; i >= 1; i-- {
		n := &m.nodes[i]
		for _, id := range m.toks[n.tokLo:n.tok] {
			n.impure = n.impure || !isStringText(tokens[id])
		}
		for c := int32(i) + 1; c < n.end; c = m.nodes[c].end {
			n.impure = n.impure || m.nodes[c].impure
		}
	}
}

// isStringText reports whether b is whole UTF-8 characters that may stand
// raw inside a JSON string (no '"', '\\' or control character).
func isStringText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 || r < 0x20 || r == '"' || r == '\\' {
			return false
		}
		b = b[n:]
	}
	return true
}

// build lays the trie out in preorder from ids sorted by their bytes.
func (m *trie) build(tokens [][]byte, ids []int32) {
	m.nodes = append(m.nodes, trieNode{depth: 0})
	var path []int32 // node index per depth-1
	var prev []byte
	for _, id := range ids {
		b := tokens[id]
		common := 0
		for common < len(b) && common < len(prev) && b[common] == prev[common] {
			common++
		}
		for _, ix := range path[common:] {
			m.nodes[ix].end = int32(len(m.nodes))
			m.nodes[ix].subHi = int32(len(m.toks))
		}
		path = path[:common]
		for d := common; d < len(b); d++ {
			path = append(path, int32(len(m.nodes)))
			m.nodes = append(m.nodes, trieNode{b: b[d], depth: int32(d + 1), subLo: int32(len(m.toks)), textPath: isStringText(b[:d+1])})
		}
		last := &m.nodes[path[len(path)-1]]
		if last.tokLo == last.tok {
			last.tokLo = int32(len(m.toks))
			last.tok = last.tokLo
		}
		m.toks = append(m.toks, id)
		last.tok++
		prev = b
	}
	for _, ix := range path {
		m.nodes[ix].end = int32(len(m.nodes))
		m.nodes[ix].subHi = int32(len(m.toks))
	}
	m.nodes[0].end = int32(len(m.nodes))
	m.nodes[0].subHi = int32(len(m.toks))
}

// Size is the vocabulary size: a mask has (Size()+63)/64 words.
func (m *Matcher) Size() int { return m.size }

// MaskWords is the length of the bitset Mask fills.
func (m *Matcher) MaskWords() int { return (m.size + 63) / 64 }
