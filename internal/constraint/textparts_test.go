package constraint

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTextTargetByParts checks the text targets computed from frame
// groups (textparts.go) against the byte-by-byte reference: wherever
// textTargetByParts reports a target, stepping each sample string-text
// character's bytes through the automaton (every ASCII one, and for each
// UTF-8 lead range its first and last lead byte with the extreme second
// and continuation bytes) must reach it, and computeTextTarget (every byte
// class stepped) must find the same set. The outputs cross counted strings
// (top level, in objects, arrays and nested arrays, with minLength, escapes
// and multi-byte characters), open strings, keys and a recursive schema;
// each is run byte by byte with the text chain followed at every byte, and
// then every set the automaton built is checked. MaskBench's CI subset
// (every schema with -maskbench.full) adds each schema's first valid
// instance.
func TestTextTargetByParts(t *testing.T) {
	tests := []struct{ schema, output string }{
		{`{"type":"string","maxLength":40}`, `"` + strings.Repeat("ab é€😀 ", 4) + `"`},
		{`{"type":"string","minLength":3,"maxLength":5}`, `"a\"\\b"`},
		{`{"type":"object","properties":{"k":{"type":"string","minLength":20,"maxLength":22},"n":{"type":"string","maxLength":2}},"required":["k"]}`, `{"n":"ü","k":"` + strings.Repeat("xyz", 7) + `"}`},
		{`{"type":"array","items":{"type":"array","items":{"type":"string","maxLength":3}}}`, `[["ab","ü€"],["a b",""]]`},
		{`{"type":"object","properties":{"a":{"type":"string","maxLength":20},"b":{"type":"string","maxLength":20},"c":{"type":"array","items":{"type":"string","maxLength":20}}},"additionalProperties":{"type":"string","maxLength":4}}`,
			`{"a":"hello","zz":"abcd","b":"wörld é\"","c":["x","yy z",""]}`},
		{`{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"}}}}`, `{"name":"hi there","tags":["ab","c"],"other":"x"}`},
		{`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"s":{"type":"string","maxLength":6},"k":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["s"]}}}`,
			`{"s":"r","k":[{"s":"abcdef","k":[{"s":""}]}]}`},
	}
	checked := 0
	for _, tt := range tests {
		c, err := JSONSchema([]byte(tt.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checked += checkTextTargetsByParts(t, c, []byte(tt.output))
	}
	for _, bc := range loadMaskBench(t, *maskbenchFull) {
		c, err := JSONSchema(bc.Schema, Options{})
		if err != nil {
			continue
		}
		for _, tc := range bc.Tests {
			if tc.Valid {
				doc, _ := CompactJSON(tc.Data)
				checked += checkTextTargetsByParts(t, c, doc)
				break
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d sets had a text target by parts", checked)
	}
}

// checkTextTargetsByParts runs out through a fresh automaton of c,
// following the text chain at every byte, then checks every set it built;
// it returns how many had a text target by parts.
func checkTextTargetsByParts(t *testing.T, c *Constraint, out []byte) int {
	t.Helper()
	a, s := newAutomaton(c.prog)
	for _, b := range out {
		a.textReach(s, 64)
		if s = a.step(s, b); s < 0 {
			t.Fatalf("output %q refused", out)
		}
	}
	n, built := 0, int32(len(a.sets))
	for s := range built {
		got, ok := a.textTargetByParts(s)
		if !ok {
			continue
		}
		n++
		for _, ch := range sampleTextChars() {
			if r := a.stepBytes(s, ch); r != got {
				t.Fatalf("output %q, set %d: by parts %d, %q steps to %d", out, s, got, ch, r)
			}
		}
		if want := a.computeTextTarget(s); want != got {
			t.Fatalf("output %q, set %d: by parts %d, byte classes %d", out, s, got, want)
		}
	}
	return n
}

// sampleTextChars lists string-text characters covering every ASCII one
// and the edges of each UTF-8 lead range.
func sampleTextChars() [][]byte {
	var out [][]byte
	for b := byte(0x20); b < 0x80; b++ {
		if b != '"' && b != '\\' {
			out = append(out, []byte{b})
		}
	}
	for _, l := range utf8Leads {
		for _, lead := range []byte{l.lo, l.hi} {
			for _, second := range []byte{l.lo2, l.hi2} {
				for _, cont := range []byte{0x80, 0xBF} {
					ch := []byte{lead, second}
					for len(ch) < int(l.n) {
						ch = append(ch, cont)
					}
					if !utf8.Valid(ch) {
						panic("sampleTextChars: invalid UTF-8")
					}
					out = append(out, ch)
				}
			}
		}
	}
	return out
}
