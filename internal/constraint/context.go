package constraint

import (
	"cmp"
	"slices"
)

// Masks by parts, abstracted from their context. The language of a set of
// parse stacks is the union of its stacks' languages, so a set's mask is
// the union of the masks of any partition of its frames. mask.go walks
// the trie from a set; here a set's frames are grouped by their parent
// frame (the caller every stack of the group returns to), and each group
// is walked with that parent replaced by a hole: the abstract set, the same
// wherever the group's rule is called from with the same stack depth. An
// object key's start is the case that needs it: at each position of a
// member chain the key-start set is new (the members are called from a
// different position of the object's rule), but the group of the member
// rule's stacks is one abstract set, walked once for the whole chain.
//
// A stack of an abstract set that finishes its group's rule returns into
// the hole: the hole frame (a program state with no edge, at the parent's
// depth) joins the set. Until then the abstract walk is exactly the real
// one with every hole frame's place taken by the parent (a bijection of
// frames), so a token whose path never returns to the hole is allowed
// exactly when the abstract walk allows it. A trie node where the hole
// frame first appears is an escape: its subtree depends on the context and
// is walked again from the real set (the set reached by the node's bytes).
// Every token the real set allows is allowed either without returning
// into a parent (by its group's abstract walk) or below the first node
// where it returns (by an escape's real walk), so the union is exact.
//
// An abstract set's mask is cached with its escapes (in a cache of its
// own, so the many one-off masks of a counted string do not evict it).

// escape is a trie node where an abstract walk reached its context, and
// the node's bytes.
type escape struct {
	node   int32
	prefix string
}

// holeFrame returns the hole frame standing for a parent at depth d (so
// the stacks above it have the real stacks' depths, and the nesting bound
// cuts them where it cuts the real ones).
func (a *automaton) holeFrame(d int32) int32 {
	if id, ok := a.holes[d]; ok {
		return id
	}
	if a.holes == nil {
		a.holes = map[int32]int32{}
	}
	a.frames = append(a.frames, frame{a.prog.hole, noFrame})
	a.depth = append(a.depth, d)
	a.mark = append(a.mark, 0)
	a.closed = append(a.closed, closed{})
	id := int32(len(a.frames) - 1)
	a.holes[d] = id
	return id
}

// holds reports whether the frames fs include a hole frame.
func (a *automaton) holds(fs []int32) bool {
	for _, id := range fs {
		if a.frames[id].pos == a.prog.hole {
			return true
		}
	}
	return false
}

// partMasks fills dst with the tokens (EOS aside) that can follow set s,
// from the masks of the abstract sets of its frame groups, a real walk of
// its frames at the stack's bottom, and a real walk of every escape. It
// reports false (dst untouched) when no group has a context to abstract.
func (a *automaton) partMasks(m *Matcher, s int32, dst []uint64) bool {
	parts, rest := a.partition(s)
	if len(parts) == 0 {
		return false
	}
	clear(dst)
	var esc []escape
	for _, p := range parts {
		bits, e := a.partMask(m, p)
		for i, w := range bits {
			dst[i] |= w
		}
		esc = append(esc, e...)
	}
	if len(rest) > 0 {
		a.scratch = append(a.scratch[:0], rest...)
		if r := a.intern(false); r >= 0 {
			a.walk(&m.full, r, 0, dst, m.text, nil)
		}
	}
	slices.SortFunc(esc, func(x, y escape) int { return cmp.Compare(x.node, y.node) })
	for _, e := range slices.CompactFunc(esc, func(x, y escape) bool { return x.node == y.node }) {
		a.rewalk(&m.full, s, e, dst, m.text)
	}
	return true
}

// partition groups set s's frames by parent. It returns the abstract sets
// of the groups, and the frames of the groups whose parent is the stack's
// bottom (no context to abstract).
func (a *automaton) partition(s int32) (parts, rest []int32) {
	fs := slices.Clone(a.sets[s].frames)
	slices.SortFunc(fs, func(x, y int32) int { return cmp.Compare(a.frames[x].parent, a.frames[y].parent) })
	for len(fs) > 0 {
		p := a.frames[fs[0]].parent
		n := 1
		for n < len(fs) && a.frames[fs[n]].parent == p {
			n++
		}
		group := fs[:n]
		fs = fs[n:]
		if p == noFrame {
			rest = append(rest, group...)
			continue
		}
		if abs := a.abstract(group, p); abs < 0 {
			rest = append(rest, group...)
		} else if !slices.Contains(parts, abs) {
			parts = append(parts, abs)
		}
	}
	return parts, rest
}

// abstract returns the set of the frames group (all with parent p), each
// with p replaced by a hole frame of p's depth.
func (a *automaton) abstract(group []int32, p int32) int32 {
	h := a.holeFrame(a.depth[p])
	a.scratch = a.scratch[:0]
	for _, id := range group {
		a.scratch = append(a.scratch, a.frameOf(a.frames[id].pos, h))
	}
	return a.intern(false)
}

// partMask is abstract set s's mask and escapes, computed once (cached).
func (a *automaton) partMask(m *Matcher, s int32) ([]uint64, []escape) {
	if bits, esc := a.parts.get(s); bits != nil {
		return bits, esc
	}
	bits := make([]uint64, m.MaskWords())
	var esc []escape
	a.walk(&m.full, s, 0, bits, m.text, &esc)
	a.parts.put(s, bits, esc)
	return bits, esc
}

// rewalk sets in dst the tokens of escape e's subtree (its node's included)
// that can follow the real set s.
func (a *automaton) rewalk(tr *trie, s int32, e escape, dst []uint64, text []uint64) {
	for i := 0; i < len(e.prefix) && s >= 0; i++ {
		s = a.step(s, e.prefix[i])
	}
	if s < 0 {
		return
	}
	n := &tr.nodes[e.node]
	for _, id := range tr.toks[n.tokLo:n.tok] {
		dst[id>>6] |= 1 << (id & 63)
	}
	a.walk(tr, s, e.node, dst, text, nil)
}
