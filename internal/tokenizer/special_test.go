package tokenizer

import "testing"

func TestSpecialMatcher(t *testing.T) {
	var m specialMatcher
	for _, s := range []specialTok{
		{s: "<a>", id: 1}, {s: "<a>b", id: 2}, {s: "<|x|>", id: 3}, {s: "<|xy|>", id: 4},
		{s: "[L]", id: 5, lstrip: true}, {s: "[R]", id: 6, rstrip: true}, {s: "<a>", id: 7}, // duplicate: first wins
	} {
		m.add(s)
	}
	tests := []struct {
		text       string
		start, end int
		id         int32
	}{
		{"no specials < here", -1, -1, -1},
		{"x<a>y", 1, 4, 1},
		{"x<a>by", 1, 5, 2},    // longest
		{"<|x<|xy|>", 3, 9, 4}, // a failed partial match does not hide a later one
		{"<|x|><a>", 0, 5, 3},  // leftmost
		{"a \t [L] b", 1, 7, 5},
		{"a [R] \n b", 2, 8, 6},
		{"<a", -1, -1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			s, e, id := m.find(tc.text)
			if s != tc.start || e != tc.end || id != tc.id {
				t.Fatalf("find(%q) = %d, %d, %d; want %d, %d, %d", tc.text, s, e, id, tc.start, tc.end, tc.id)
			}
		})
	}
}
