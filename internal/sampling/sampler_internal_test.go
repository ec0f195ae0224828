package sampling

import (
	"reflect"
	"testing"
)

// TestSortedTopMatchesInsertion: the sorting path (large n, up to the
// whole vocabulary) orders the tokens exactly as the insertion path does,
// ties to the lower id included.
func TestSortedTopMatchesInsertion(t *testing.T) {
	rng := NewRNG(7)
	raw := make([]float32, 300)
	for i := range raw {
		raw[i] = float32(int(rng.Uint64()%40)) / 4 // many ties
	}
	for _, n := range []int{1, 5, insertionTopMax, insertionTopMax + 1, 299, 300} {
		a := insertionTop(nil, raw, n)
		b := sortedTop(nil, raw, n)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("n=%d: insertion %v\nsorted %v", n, a[:min(8, len(a))], b[:min(8, len(b))])
		}
	}
}
