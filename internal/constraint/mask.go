package constraint

// maskCacheSize is how many masks an automaton keeps, by deterministic
// state: inside a long string the same state recurs at every token, and
// concurrent requests of one constraint share the automaton.
const maskCacheSize = 64

// maskCache keeps recent masks by set id (FIFO eviction), each with the
// escapes of an abstract set's walk (nil for a real set).
type maskCache struct {
	ids   []int32
	masks [][]uint64
	esc   [][]escape
	next  int
}

func (c *maskCache) get(s int32) ([]uint64, []escape) {
	for i, id := range c.ids {
		if id == s {
			return c.masks[i], c.esc[i]
		}
	}
	return nil, nil
}

func (c *maskCache) put(s int32, m []uint64, esc []escape) {
	if len(c.ids) < maskCacheSize {
		c.ids = append(c.ids, s)
		c.masks = append(c.masks, append([]uint64(nil), m...))
		c.esc = append(c.esc, esc)
		return
	}
	c.ids[c.next] = s
	c.masks[c.next] = append(c.masks[c.next][:0], m...)
	c.esc[c.next] = esc
	c.next = (c.next + 1) % maskCacheSize
}

// fillMask sets in dst the bit of every token whose bytes can follow set s,
// and of the EOS ids when s is accepting, walking the token trie and
// skipping each subtree whose prefix is already dead.
func (a *automaton) fillMask(m *Matcher, s int32, dst []uint64) {
	if c, _ := a.masks.get(s); c != nil {
		copy(dst, c)
		return
	}
	if n, all, ok := a.textReach(s, m.maxTextChars()); ok {
		copy(dst, m.textUpTo[min(n, m.maxTextChars())])
		a.walk(m, &m.impure, s, 0, dst, false, nil)
		if !all {
			a.walk(m, &m.long, s, 0, dst, false, nil)
		}
	} else if !a.partMasks(m, s, dst) {
		clear(dst)
		a.walk(m, &m.full, s, 0, dst, true, nil)
	}
	if a.sets[s].accept {
		for _, id := range m.eos {
			dst[id>>6] |= 1 << (id & 63)
		}
	}
	a.masks.put(s, dst, nil)
}

// minLoopSubtree is the subtree size (tokens) from which walk checks
// whether a node's state is a text loop.
const minLoopSubtree = 8

// walk sets in dst the tokens of tr's subtree under node root (0: the
// whole trie) that can follow set s from that node, walking the trie and
// skipping each subtree whose prefix is already dead. With loops, where a
// node's state is a text loop (see isTextLoop) its subtree is decided at
// once: from the loop's own mask when the node's bytes are string text
// (see loopMask), else by allowing every string-text token and walking
// only the subtrees holding other tokens. A node whose state holds a hole
// frame (an abstract set's stack returned to its context, see context.go)
// is appended to esc, and the walk goes on with the set's other frames.
// Where a whole-trie walk's set is a byte loop (see byteloop.go) at its
// root or at a node reached by the loop's bytes, the tokens of the loop's
// bytes are taken at once and only the subtrees of other tokens walked.
func (a *automaton) walk(m *Matcher, tr *trie, s, root int32, dst []uint64, loops bool, esc *[]escape) {
	var stack [256]int32
	var rows [256]*[256]int32 // rows[d]: the transition row of stack[d]
	stack[0], rows[0] = s, a.row(s)
	nodes := tr.nodes
	base := nodes[root].depth
	covered := int32(0)  // nodes below this index, in a covered subtree, are done
	var path [256]byte   // path[d-1]: the byte of the current node at depth d
	var textAt [256]bool // textAt[d-1]: the current node at depth d has string-text bytes
	bl := a.rootByteLoop(m, tr, s, root, loops, dst)
	var inner *byteLoop // a byte loop's nodes below innerEnd: their tokens' subtrees are done
	innerEnd := int32(0)
	visited := int64(0)
	defer func() { a.walked += visited }()
	for i := root + 1; i < nodes[root].end; {
		visited++
		n := &nodes[i]
		d := n.depth - base
		if inner != nil && i >= innerEnd {
			inner = nil
		}
		if int(d) >= len(stack) || i < covered && !n.impure || bl != nil && !bl.isMixed(i) || inner != nil && !inner.isMixed(i) {
			i = n.end
			continue
		}
		t := rows[d-1][n.b] - transBias
		if t == unknown {
			t = a.computeStep(stack[d-1], n.b)
		}
		if t < 0 {
			i = n.end
			continue
		}
		hole := esc != nil && a.holeAt[t] // only abstract walks meet holes
		if hole {
			*esc = append(*esc, escape{tr: tr, node: i})
			if len(a.sets[t].frames) == 1 {
				i = n.end
				continue
			}
		}
		if loops && !hole && i >= covered && n.subHi-n.subLo >= minLoopSubtree && a.isTextLoop(t) {
			if n.textPath && tr == &m.full {
				a.fromLoop(m, t, i, dst, esc)
				i = n.end
				continue
			}
			m.orSubtree(tr, i, m.text, dst)
			covered = n.end
			if !n.impure {
				i = n.end
				continue
			}
		}
		if loops && !hole && i >= covered && n.subHi-n.subLo >= minLoopSubtree && tr == &m.full && n.b >= 0xC2 && n.b <= 0xF4 &&
			(d == 1 && (root == 0 || nodes[root].textPath) || d > 1 && textAt[d-2]) && a.loopLead(m, stack[d-1], t, i, dst, esc) {
			i = n.end
			continue
		}
		path[d-1], textAt[d-1] = n.b, n.textPath
		if inner == nil && bl == nil && root == 0 && loops && !hole && n.subHi-n.subLo >= minByteLoopSubtree {
			if inner = a.nodeByteLoop(m, t, path[:d], i, dst); inner != nil {
				innerEnd = n.end
			}
		}
		for _, id := range tr.toks[n.tokLo:n.tok] {
			dst[id>>6] |= 1 << (id & 63)
		}
		stack[d], rows[d] = t, a.row(t)
		i++
	}
}

// loopLead decides the subtree of node i of the whole trie, a UTF-8 lead
// byte after string text, reached with set t from set u (the set at its
// parent node), when the text loop L that u reaches by a space steps by
// that lead byte to t too: from the trie's root L reaches L by the text
// before the lead byte, then t, so a token of the subtree follows from
// the walk's start exactly as it follows from L (see fromLoop). Inside an
// additional key this holds at every key prefix (keyContinuations). It
// reports whether it decided the subtree.
func (a *automaton) loopLead(m *Matcher, u, t, i int32, dst []uint64, esc *[]escape) bool {
	l := a.step(u, ' ')
	if l < 0 || l == t || a.step(l, m.full.nodes[i].b) != t || !a.isTextLoop(l) {
		return false
	}
	a.fromLoop(m, l, i, dst, esc)
	return true
}
