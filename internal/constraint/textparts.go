package constraint

// Text targets by parts. Inside a string counted by minLength/maxLength
// each position is a new deterministic state: the character rule's frames
// sit on a different return frame (the position's place in the unrolled
// repetition). Stepping every class of string-text characters from each
// position creates the multi-byte intermediates (about 20 sets) at every
// position again. The language of a set is the union of its frame
// groups' (see context.go), so when each group's abstract set (its parent
// replaced by a hole frame) leads by every string-text character to one
// same abstract set, the real set leads by every one of them to the union
// of those targets made concrete: the hole frame (the group's stacks
// returned to their parent after the character) becomes the parent's
// closure, and a frame stacked on the hole the same frame on the parent.
// A group whose stacks would return inside a character is not uniform
// (computeTextTarget), since the context's bytes would follow. The
// abstract group is the same set at every position, so its targets and
// intermediates are computed once per string; a position costs one
// closure and one new set.

// textTargetByParts returns real set s's text target from the raw text
// targets of its frame groups' abstract sets, and false when s is
// abstract, has no group with a context, or a group is not uniform. The
// frames with no parent form one real set of their own, whose text
// target must be uniform too. On success the transitions of s on the
// ASCII string-text bytes are recorded.
func (a *automaton) textTargetByParts(s int32) (int32, bool) {
	if a.sets[s].abs || a.sets[s].hole {
		return 0, false
	}
	parts, rest := a.partition(s)
	if len(parts) == 0 {
		return 0, false
	}
	var out []int32
	accept := false
	if len(rest) > 0 {
		a.scratch = append(a.scratch[:0], rest...)
		switch t := a.textTarget(a.intern(false)); {
		case t == nonUniform:
			return 0, false
		case t >= 0:
			out = append(out, a.sets[t].frames...)
			accept = a.sets[t].accept
		}
	}
	for _, p := range parts {
		t := a.rawTextTarget(p.abs)
		if t == nonUniform {
			return 0, false
		}
		if t == deadSet {
			continue
		}
		for _, id := range a.sets[t].frames {
			if a.frames[id].pos != a.prog.hole {
				out = append(out, a.reparent(id, p.parent))
				continue
			}
			c := a.closureOf(p.parent)
			out = append(out, c.stops...)
			accept = accept || c.accept
		}
	}
	a.scratch = append(a.scratch[:0], out...)
	t := a.intern(accept)
	row := a.row(s)
	for _, r := range [][2]byte{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7F}} {
		for b := r[0]; b <= r[1]; b++ {
			row[b] = t + transBias
		}
	}
	return t, true
}

// reparent returns frame id of an abstract set with the hole frame at the
// bottom of its stack replaced by the real frame parent.
func (a *automaton) reparent(id, parent int32) int32 {
	f := a.frames[id]
	if f.pos == a.prog.hole {
		return parent
	}
	return a.frameOf(f.pos, a.reparent(f.parent, parent))
}
