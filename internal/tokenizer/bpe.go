package tokenizer

// The BPE merge engine shared by both algorithms: symbols form a doubly
// linked list over a word; candidate merges sit in a binary min-heap ordered
// by (rank, position), so the best merge - the leftmost one among the lowest
// rank - is applied first, as in SentencePiece/llama.cpp and Hugging Face's
// BPE. Stale heap entries are detected when popped.

type symbol struct {
	id         int32 // -1: merged into its left neighbour
	prev, next int32 // indices into the symbol slice, -1 at the ends
}

type heapItem struct {
	rank        int32
	pos         int32 // index of the left symbol
	left, right int32 // the ids the pair had when pushed
	id          int32 // the merged id
}

// workspace is per-Encode scratch memory, pooled by the Tokenizer.
type workspace struct {
	syms []symbol
	heap []heapItem
	buf  []byte
}

func itemLess(a, b *heapItem) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

func (w *workspace) push(it heapItem) {
	h := append(w.heap, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !itemLess(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	w.heap = h
}

func (w *workspace) pop() heapItem {
	h := w.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && itemLess(&h[r], &h[l]) {
			m = r
		}
		if !itemLess(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.heap = h
	return top
}

// addSym appends a symbol to the workspace's list.
func (w *workspace) addSym(id int32) {
	n := int32(len(w.syms))
	w.syms = append(w.syms, symbol{id: id, prev: n - 1, next: n + 1})
}

// tryPair pushes the merge of symbols i and i.next when the pair merges.
func (t *Tokenizer) tryPair(w *workspace, i int32) {
	if i < 0 {
		return
	}
	j := w.syms[i].next
	if j < 0 {
		return
	}
	a, b := w.syms[i].id, w.syms[j].id
	if m, ok := t.merges[pairKey(a, b)]; ok {
		w.push(heapItem{rank: m.rank, pos: i, left: a, right: b, id: m.id})
	}
}

// bpe merges w.syms (freshly added with addSym) and appends the result to
// out.
func (t *Tokenizer) bpe(w *workspace, out []int32) []int32 {
	syms := w.syms
	n := int32(len(syms))
	if n == 0 {
		return out
	}
	syms[n-1].next = -1
	if n > 1 {
		w.heap = w.heap[:0]
		for i := int32(0); i < n-1; i++ {
			t.tryPair(w, i)
		}
		for len(w.heap) > 0 {
			it := w.pop()
			s := &syms[it.pos]
			if s.id != it.left || s.next < 0 || syms[s.next].id != it.right {
				continue // stale
			}
			r := s.next
			s.id = it.id
			s.next = syms[r].next
			if s.next >= 0 {
				syms[s.next].prev = it.pos
			}
			syms[r].id = -1
			t.tryPair(w, s.prev)
			t.tryPair(w, it.pos)
		}
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

// encodeSPM encodes one text segment SentencePiece-style: '▁' prepended,
// spaces as '▁', characters missing from the vocabulary as byte tokens.
func (t *Tokenizer) encodeSPM(w *workspace, out []int32, text string, prefix bool) []int32 {
	w.syms = w.syms[:0]
	if prefix {
		t.addSPMChar(w, "▁", t.spaceID)
	}
	for i := 0; i < len(text); {
		c := text[i]
		n := 1
		if c >= 0x80 {
			_, n = decodeRuneInString(text[i:])
		}
		ch := text[i : i+n]
		if c == ' ' {
			t.addSPMChar(w, "▁", t.spaceID)
		} else {
			id, ok := t.vocab[ch]
			if !ok || t.attrs[id]&(attrByte|attrSpecial) != 0 {
				id = -1
			}
			t.addSPMChar(w, ch, id)
		}
		i += n
	}
	return t.bpe(w, out)
}

// addSPMChar adds one character as a symbol: its token id, or its bytes'
// fallback tokens, or unk.
func (t *Tokenizer) addSPMChar(w *workspace, ch string, id int32) {
	if id >= 0 {
		w.addSym(id)
		return
	}
	for i := 0; i < len(ch); i++ {
		if b := t.byteTok[ch[i]]; b >= 0 {
			w.addSym(b)
			continue
		}
		// No byte fallback: one unk for the character, consecutive unks fused.
		if k := len(w.syms); k == 0 || w.syms[k-1].id != t.unk {
			w.addSym(t.unk)
		}
		return
	}
}

// encodeByteLevel pre-tokenizes text and encodes each word with byte-level
// BPE.
func (t *Tokenizer) encodeByteLevel(w *workspace, out []int32, text string) []int32 {
	for i := 0; i < len(text); {
		j := t.pretok.next(text, i)
		out = t.encodeWord(w, out, text[i:j])
		i = j
	}
	return out
}

func (t *Tokenizer) encodeWord(w *workspace, out []int32, word string) []int32 {
	if len(word) == 1 {
		return append(out, t.byteTok[word[0]])
	}
	if t.ignoreMerges {
		b := w.buf[:0]
		for i := 0; i < len(word); i++ {
			b = append(b, byteToRune[word[i]]...)
		}
		w.buf = b
		if id, ok := t.vocab[string(b)]; ok {
			return append(out, id)
		}
	}
	w.syms = w.syms[:0]
	for i := 0; i < len(word); i++ {
		w.addSym(t.byteTok[word[i]])
	}
	return t.bpe(w, out)
}
