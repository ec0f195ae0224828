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
// depth) joins the set, and leaves it at the next byte. Apart from it,
// the abstract walk is exactly the real one with every hole frame's place
// taken by the parent (a bijection of frames), so a token is allowed by
// the abstract walk exactly when some stack of the group accepts it
// without returning into the parent. A trie node where the hole frame
// appears is an escape: there the real stacks that returned are the
// closure of the parent frame, the same set wherever the return happens,
// so the escape's subtree (its node included) is walked again from that
// set. Every token the real group allows is allowed either without a
// return (by the abstract walk) or after a first return at some node (by
// that escape's walk), so the union is exact. Text targets through a set
// holding a hole are not uniform (eachClass), so the shortcuts of
// textloop.go never grant a token whose bytes return into the context.
//
// Sets inside strings (whose text targets textReach follows) keep the
// real walk of their non-text tokens: abstracted, every token closing the
// string would be an escape. An abstract set's mask is cached with its
// escapes (in a cache of its own, so the many one-off masks of a counted
// string do not evict it).

// escape is a node of trie tr where an abstract walk reached its context.
type escape struct {
	tr   *trie
	node int32
}

// part is a group of a set's frames: their abstract set and their parent.
type part struct{ abs, parent int32 }

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
	a.onHole = append(a.onHole, true)
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
// its other frames, and for each group the walk of its escapes from its
// parent's closure. It reports false (dst untouched) when no group has a
// context to abstract.
func (a *automaton) partMasks(m *Matcher, s int32, dst []uint64) bool {
	parts, rest := a.partition(s)
	if len(parts) == 0 {
		return false
	}
	clear(dst)
	for _, p := range parts {
		bits, esc := a.partMask(m, p.abs)
		for i, w := range bits {
			dst[i] |= w
		}
		if len(esc) == 0 {
			continue
		}
		c := a.closureOf(p.parent)
		a.scratch = append(a.scratch[:0], c.stops...)
		if ctx := a.intern(c.accept); ctx >= 0 {
			for _, e := range esc {
				a.rewalk(m, ctx, e, dst)
			}
		}
	}
	if len(rest) > 0 {
		a.scratch = append(a.scratch[:0], rest...)
		if r := a.intern(false); r >= 0 {
			a.walk(m, &m.full, r, 0, dst, true, nil)
		}
	}
	return true
}

// partition groups set s's frames by parent. It returns the groups with
// a context to abstract, and the frames of the others (the stack's
// bottom).
func (a *automaton) partition(s int32) (parts []part, rest []int32) {
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
		} else if abs := a.abstract(group, p); abs < 0 {
			rest = append(rest, group...)
		} else {
			parts = append(parts, part{abs, p})
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

// partMask is abstract set s's mask and escapes, computed once (cached):
// from its text tokens by character count and a walk of the other tokens
// when its text targets allow (see textReach), else by a walk of the whole
// trie.
func (a *automaton) partMask(m *Matcher, s int32) ([]uint64, []escape) {
	if bits, esc := a.parts.get(s); bits != nil {
		return bits, esc
	}
	bits := make([]uint64, m.MaskWords())
	var esc []escape
	if n, all, ok := a.textReach(s, m.maxTextChars()); ok {
		copy(bits, m.textUpTo[min(n, m.maxTextChars())])
		a.walk(m, &m.impure, s, 0, bits, false, &esc)
		if !all {
			a.walk(m, &m.long, s, 0, bits, false, &esc)
		}
	} else {
		a.walk(m, &m.full, s, 0, bits, true, &esc)
	}
	a.parts.put(s, bits, esc)
	return bits, esc
}

// rewalk sets in dst the tokens of escape e's subtree (its node's
// included) whose bytes after the node can follow the real set ctx.
func (a *automaton) rewalk(m *Matcher, ctx int32, e escape, dst []uint64) {
	n := &e.tr.nodes[e.node]
	for _, id := range e.tr.toks[n.tokLo:n.tok] {
		dst[id>>6] |= 1 << (id & 63)
	}
	a.walk(m, e.tr, ctx, e.node, dst, e.tr == &m.full, nil)
}

// fromLoop sets in dst the tokens of the subtree of the whole trie's node
// i that text loop t allows, i's bytes being string text: t reaches t by
// them, so a token of the subtree follows from the node exactly as it
// follows from t. The escapes of t's mask inside the subtree are appended
// to esc (a real loop has none).
func (a *automaton) fromLoop(m *Matcher, t, i int32, dst []uint64, esc *[]escape) {
	bits, lesc := a.loopMask(m, t)
	m.orSubtree(&m.full, i, bits, dst)
	n := &m.full.nodes[i]
	lo, _ := slices.BinarySearchFunc(lesc, i, func(e escape, i int32) int { return cmp.Compare(e.node, i) })
	for _, e := range lesc[lo:] {
		if e.node >= n.end {
			break
		}
		*esc = append(*esc, e)
	}
}

// loopMask is text loop t's mask over the whole trie: a real loop's from
// fillMask; an abstract loop's (cached) from its text tokens and a walk of
// the others, with its escapes (in preorder) moved to the whole trie's
// nodes of the same bytes.
func (a *automaton) loopMask(m *Matcher, t int32) ([]uint64, []escape) {
	if !a.sets[t].abs {
		if bits, _ := a.masks.get(t); bits != nil {
			return bits, nil
		}
		bits := make([]uint64, m.MaskWords())
		a.fillMask(m, t, bits)
		return bits, nil
	}
	if bits, esc := a.loops.get(t); bits != nil {
		return bits, esc
	}
	bits := slices.Clone(m.text)
	var esc []escape
	a.walk(m, &m.impure, t, 0, bits, false, &esc)
	for i, e := range esc {
		esc[i] = escape{tr: &m.full, node: m.impure.full[e.node]}
	}
	a.loops.put(t, bits, esc)
	return bits, esc
}
