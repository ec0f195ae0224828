package sampling

import "math"

// Constraint restricts the tokens one sequence may sample next (structured
// outputs: a JSON schema, a regex, a grammar). Mask writes the bitset of
// allowed token ids (bit id%64 of word id/64) for the sequence's output so
// far; Advance consumes the token that was sampled, or fails when the mask
// did not allow it. One Constraint belongs to one sequence; Mask and
// Advance are never called concurrently for it.
type Constraint interface {
	Mask(dst []uint64)
	Advance(tok int32) error
	// Fork returns an independent copy (a speculative step advances one
	// through the drafts it accepts, the scheduler the original).
	Fork() Constraint
}

// ApplyMask sets to −Inf every logit whose token the bitset mask does not
// allow, and reports whether any token is allowed.
func ApplyMask(logits []float32, mask []uint64) bool {
	any := false
	negInf := float32(math.Inf(-1))
	for w, bits := range mask {
		base := w * 64
		if base >= len(logits) {
			break
		}
		if bits == ^uint64(0) && base+64 <= len(logits) {
			any = true
			continue
		}
		for b := 0; b < 64 && base+b < len(logits); b++ {
			if bits&(1<<b) == 0 {
				logits[base+b] = negInf
			} else {
				any = true
			}
		}
	}
	for i := len(mask) * 64; i < len(logits); i++ {
		logits[i] = negInf
	}
	return any
}
