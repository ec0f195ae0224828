package constraint

// maskCacheSize is how many masks an automaton keeps, by deterministic
// state: inside a long string the same state recurs at every token, and
// concurrent requests of one constraint share the automaton.
const maskCacheSize = 64

// maskCache keeps recent masks by set id (FIFO eviction).
type maskCache struct {
	ids   []int32
	masks [][]uint64
	next  int
}

func (c *maskCache) get(s int32) []uint64 {
	for i, id := range c.ids {
		if id == s {
			return c.masks[i]
		}
	}
	return nil
}

func (c *maskCache) put(s int32, m []uint64) {
	if len(c.ids) < maskCacheSize {
		c.ids = append(c.ids, s)
		c.masks = append(c.masks, append([]uint64(nil), m...))
		return
	}
	c.ids[c.next] = s
	c.masks[c.next] = append(c.masks[c.next][:0], m...)
	c.next = (c.next + 1) % maskCacheSize
}

// fillMask sets in dst the bit of every token whose bytes can follow set s,
// and of the EOS ids when s is accepting, walking the token trie and
// skipping each subtree whose prefix is already dead.
func (a *automaton) fillMask(m *Matcher, s int32, dst []uint64) {
	if c := a.masks.get(s); c != nil {
		copy(dst, c)
		return
	}
	if n, all, ok := a.textReach(s, m.maxTextChars()); ok {
		copy(dst, m.textUpTo[min(n, m.maxTextChars())])
		a.walk(&m.impure, s, dst, nil)
		if !all {
			a.walk(&m.long, s, dst, nil)
		}
	} else {
		clear(dst)
		a.walk(&m.full, s, dst, m.text)
	}
	if a.sets[s].accept {
		for _, id := range m.eos {
			dst[id>>6] |= 1 << (id & 63)
		}
	}
	a.masks.put(s, dst)
}

// minLoopSubtree is the subtree size (tokens) from which walk checks
// whether a node's state is a text loop.
const minLoopSubtree = 8

// walk sets in dst the tokens of tr that can follow set s, walking the trie
// and skipping each subtree whose prefix is already dead. When text is not
// nil and a node's state is a text loop (see isTextLoop), every string-text
// token of its subtree is allowed at once, and only the subtrees holding
// other tokens are walked.
func (a *automaton) walk(tr *trie, s int32, dst []uint64, text []uint64) {
	var stack [256]int32
	var rows [256]*[256]int32 // rows[d]: the transition row of stack[d]
	stack[0], rows[0] = s, a.row(s)
	nodes := tr.nodes
	covered := int32(0) // nodes below this index, in a covered subtree, are done
	visited := int64(0)
	defer func() { a.walked += visited }()
	for i := 1; i < len(nodes); {
		visited++
		n := &nodes[i]
		if int(n.depth) >= len(stack) || int32(i) < covered && !n.impure {
			i = int(n.end)
			continue
		}
		t := rows[n.depth-1][n.b] - transBias
		if t == unknown {
			t = a.computeStep(stack[n.depth-1], n.b)
		}
		if t < 0 {
			i = int(n.end)
			continue
		}
		for _, id := range tr.toks[n.tokLo:n.tok] {
			dst[id>>6] |= 1 << (id & 63)
		}
		if text != nil && int32(i) >= covered && n.subHi-n.subLo >= minLoopSubtree && a.isTextLoop(t) {
			for _, id := range tr.toks[n.subLo:n.subHi] {
				dst[id>>6] |= text[id>>6] & (1 << (id & 63))
			}
			covered = n.end
			if !n.impure {
				i = int(n.end)
				continue
			}
		}
		stack[n.depth], rows[n.depth] = t, a.row(t)
		i++
	}
}
