package constraint

import "math/bits"

// Byte loops. Inside a string under a format or pattern (a URI's path, a
// hostname) a state often steps back to itself on a large set of bytes C
// without being a text loop (some characters are not allowed, or lead
// elsewhere). Every token made of C's bytes only is then allowed from it
// and keeps it, so a walk grants those tokens at once (a bitset per C,
// built once per Matcher) and descends only into the subtrees holding
// other tokens.

// byteLoop is the matcher's precomputation for one byte set C.
type byteLoop struct {
	only  []uint64 // the tokens whose bytes are all in C
	mixed []uint64 // by node of the whole trie: its subtree holds another token
}

// minByteLoop is the least number of bytes a byte loop's set must hold
// for walk to use it; minByteLoopSubtree the least tokens under a node.
const (
	minByteLoop        = 32
	minByteLoopSubtree = 1024
)

// byteLoopOf returns the precomputation of byte set c, built once.
func (m *Matcher) byteLoopOf(c [4]uint64) *byteLoop {
	m.loopMu.Lock()
	defer m.loopMu.Unlock()
	if bl, ok := m.byteLoops[c]; ok {
		return bl
	}
	bl := &byteLoop{only: make([]uint64, m.MaskWords()), mixed: make([]uint64, (len(m.full.nodes)+63)/64)}
	in := func(b byte) bool { return c[b>>6]&(1<<(b&63)) != 0 }
	other := make([]int32, len(m.full.toks)+1) // other[k]: tokens not all in c among toks[:k]
	for k, id := range m.full.toks {
		all := true
		for _, b := range m.tokens[id] {
			all = all && in(b)
		}
		other[k+1] = other[k]
		if all {
			bl.only[id>>6] |= 1 << (id & 63)
		} else {
			other[k+1]++
		}
	}
	for i, n := range m.full.nodes {
		if other[n.subHi] > other[n.subLo] {
			bl.mixed[i>>6] |= 1 << (i & 63)
		}
	}
	if m.byteLoops == nil {
		m.byteLoops = map[[4]uint64]*byteLoop{}
	}
	m.byteLoops[c] = bl
	return bl
}

// isMixed reports whether node i's subtree holds a token not all in C.
func (bl *byteLoop) isMixed(i int32) bool { return bl.mixed[i>>6]&(1<<(i&63)) != 0 }

// byteLoopSet returns the set of bytes by which set s steps back to s,
// and whether it holds at least minByteLoop bytes (else it is empty). It
// is computed once per set (every byte class of s is stepped).
func (a *automaton) byteLoopSet(s int32) ([4]uint64, bool) {
	if c, ok := a.byteSet[s]; ok {
		return c, c != [4]uint64{}
	}
	var c [4]uint64
	for b := range 256 { // a byte class's first byte computes the whole class

		if a.step(s, byte(b)) == s {
			c[b>>6] |= 1 << (b & 63)
		}
	}
	n := bits.OnesCount64(c[0]) + bits.OnesCount64(c[1]) + bits.OnesCount64(c[2]) + bits.OnesCount64(c[3])
	if n < minByteLoop {
		c = [4]uint64{}
	}
	if a.byteSet == nil {
		a.byteSet = map[int32][4]uint64{}
	}
	a.byteSet[s] = c
	return c, c != [4]uint64{}
}

// rootByteLoop adds to dst, when a walk of the whole trie starts from a
// byte loop s, the tokens of its bytes, and returns the loop's
// precomputation (nil otherwise).
func (a *automaton) rootByteLoop(m *Matcher, tr *trie, s, root int32, loops bool, dst []uint64) *byteLoop {
	if !loops || root != 0 || tr != &m.full {
		return nil
	}
	c, ok := a.byteLoopSet(s)
	if !ok {
		return nil
	}
	bl := m.byteLoopOf(c)
	for i, w := range bl.only {
		dst[i] |= w
	}
	return bl
}

// nodeByteLoop adds to dst, when set t (reached at node n of the whole
// trie by the bytes path) is a byte loop whose set holds every byte of
// path, the tokens of n's subtree made of the loop's bytes (from t they
// keep t), and returns the loop's precomputation (nil otherwise). A text
// loop is left to the text shortcuts.
func (a *automaton) nodeByteLoop(m *Matcher, t int32, path []byte, n int32, dst []uint64) *byteLoop {
	if a.isTextLoop(t) {
		return nil
	}
	for _, b := range path { // before stepping every byte class of t
		if a.step(t, b) != t {
			return nil
		}
	}
	c, ok := a.byteLoopSet(t)
	if !ok {
		return nil
	}
	for _, b := range path {
		if c[b>>6]&(1<<(b&63)) == 0 {
			return nil
		}
	}
	bl := m.byteLoopOf(c)
	m.orSubtree(&m.full, n, bl.only, dst)
	return bl
}
