package output

import "testing"

func TestCheckStop(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		newChars int
		stop     []string
		include  bool
		want     string
		cut      int
		ok       bool
	}{
		{"no stop strings", "hello", 5, nil, false, "", -1, false},
		{"no new chars", "hello", 0, []string{"l"}, false, "", -1, false},
		{"match in new text, cut at start", "hello world", 6, []string{"wor"}, false, "wor", 6, true},
		{"match spanning old and new text", "hello world", 5, []string{"o w"}, false, "o w", 4, true},
		{"old text alone is not searched again", "stop and more", 3, []string{"stop"}, false, "", -1, false},
		{"include: cut after the stop string", "a STOP b", 6, []string{"STOP"}, true, "STOP", 6, true},
		{"include: stop string at the end, nothing to cut", "a STOP", 4, []string{"STOP"}, true, "STOP", -1, true},
		{"list order wins over position", "xx AA BB", 5, []string{"BB", "AA"}, false, "BB", 6, true},
		{"first occurrence in the searched window", "ab ab ab", 8, []string{"ab"}, false, "ab", 0, true},
		{"multi-byte stop string", "héllo→wörld", 9, []string{"→w"}, false, "→w", 6, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cut, ok := checkStop([]byte(c.text), c.newChars, c.stop, c.include)
			if got != c.want || cut != c.cut || ok != c.ok {
				t.Errorf("checkStop(%q, %d, %q, %v) = %q, %d, %v; want %q, %d, %v",
					c.text, c.newChars, c.stop, c.include, got, cut, ok, c.want, c.cut, c.ok)
			}
		})
	}
}

func TestHoldBack(t *testing.T) {
	cases := []struct {
		text string
		stop []string
		want int
	}{
		{"hello", nil, 0},
		{"hello", []string{"xyz"}, 0},
		{"hello w", []string{"world"}, 1},
		{"hello wor", []string{"world"}, 3},
		{"hello wor", []string{"world", "or"}, 3},
		{"hello o", []string{"oo", "o wo"}, 1},
		{"ab", []string{"abcdef"}, 2},
		{"end.", []string{"."}, 0}, // a one-byte stop string never needs holding
	}
	for _, c := range cases {
		if got := holdBack([]byte(c.text), c.stop); got != c.want {
			t.Errorf("holdBack(%q, %q) = %d, want %d", c.text, c.stop, got, c.want)
		}
	}
}
