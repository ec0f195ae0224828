package constraint

import (
	"strings"
	"testing"
)

// TestMaskAgreesWithAllowed checks the mask shortcuts (text targets, text
// tokens by character count, the trie of the longer text tokens, masks by
// parts abstracted from their context) against Allowed, which runs each
// token's bytes through the automaton one by one: with the Llama-3
// vocabulary, at every token of an output, every token id must be in the
// mask exactly when Allowed says so. The outputs reach the ends of counted
// strings (maxLength 40 > the chain bound, minLength), and pass multi-byte
// characters and unconstrained strings. The object cases walk member
// chains (more than three required members in declaration order, up to
// three in any order, optional and additional members), where one
// abstract key-start set serves every position and tokens that finish a
// member (`":0,`, `"}]`) return into contexts that differ: nested objects,
// arrays of objects, a recursive schema at several depths. Each output is
// run twice on the constraint's shared automaton, the second time from the
// masks the first cached.
func TestMaskAgreesWithAllowed(t *testing.T) {
	tok, m := llama3Matcher(t)
	tests := []struct{ name, schema, output string }{
		{"maxLength 40", `{"type":"string","maxLength":40}`, `"` + strings.Repeat("ab cd é ", 5) + `"`},
		{"minLength and maxLength", `{"type":"object","properties":{"k":{"type":"string","minLength":20,"maxLength":22}},"required":["k"]}`, `{"k":"` + strings.Repeat("xyz", 7) + `"}`},
		{"short counted string in an array", `{"type":"array","items":{"type":"string","maxLength":3}}`, `["ab","ü€","a b"]`},
		{"open string and keys", `{"type":"object","properties":{"name":{"type":"string"}}}`, `{"name":"` + strings.Repeat("hello world ", 4) + `","other":"x"}`},
		{"member chain, five required in order", chainSchema, `{"id":0,"name":"a","type":"b","value":1,"enabled":true,"x":0,"idx":[],"note":"n"}`},
		{"member chain, nested and in arrays", `{"type":"object","properties":{"a":` + chainSchema + `,"b":{"type":"array","items":` + chainSchema + `}},"required":["b"]}`,
			`{"b":[{"id":1,"name":"","type":"t","value":0,"enabled":false},{"id":2,"name":"n","type":"","value":10,"enabled":true,"id2":0}],"a":{"id":3,"name":"x","type":"y","value":2,"enabled":false}}`},
		{"three required in any order", `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"ok":{"type":"boolean"}},"required":["name","id","ok"]}`,
			`{"ok":true,"tags":["a"],"id":0,"x":null,"name":"nm"}`},
		{"closed object, keys prefixes of others", `{"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"integer"},"abc":{"type":"object","properties":{"a":{"type":"integer"},"abc":{"type":"integer"}},"additionalProperties":false}},"required":["ab","a"],"additionalProperties":false}`,
			`{"abc":{"abc":0,"a":1},"a":0,"ab":12}`},
		{"equal subschemas in different contexts", `{"type":"object","properties":{"a":{"type":"string","maxLength":20},"b":{"type":"string","maxLength":20},"c":{"type":"array","items":{"type":"string","maxLength":20}},"d":{"type":"string","format":"date"},"e":{"type":"array","items":{"type":"string","format":"date"}},"f":{"type":"string"},"g":{"type":"array","items":{"type":"string"}}},"required":["a","b","c","d","e"]}`,
			`{"a":"hello","b":"wörld é\"","c":["x","yy z",""],"d":"2024-01-31","e":["2023-12-01"],"f":"ab","g":["cd","e"]}`},
		{"pattern string reaching a text loop", `{"type":"object","properties":{"p":{"type":"string","pattern":"^( [^\"]*|x)$"},"q":{"type":"array","items":{"type":"string","pattern":"^( [^\"]*|x)$"}}}}`,
			`{"p":" ab","q":[" c","x"," d"],"p":"x"}`},
		{"objects sharing their additional keys' rules", `{"type":"object","properties":{"a":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},"b":{"type":"object","properties":{"m":{"type":"string"}}},"c":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}}}}}}`,
			`{"a":{"n":1,"other key":2,"k":[]},"b":{"m":"x","k2":{},"n":0},"c":[{"id":1,"name":"q"},{}],"extra":null}`},
		{"byte loops: a pattern's class, a URI", `{"type":"object","properties":{"p":{"type":"string","pattern":"^[a-z0-9_-]*$"},"u":{"type":"string","format":"uri"},"q":{"type":"array","items":{"type":"string","pattern":"^[a-z0-9_-]*$"}}},"required":["p","u"]}`,
			`{"p":"abc-def_12","u":"https://www.example.com/a/b?x=1","q":["x-y","","zz"]}`},
		{"non-ASCII key names and additional keys", `{"type":"object","properties":{"größe":{"type":"integer"},"名前":{"type":"string","maxLength":4},"a":{"type":"object","properties":{"é":{"type":"boolean"}}}},"required":["名前"]}`,
			`{"größe":1,"grün":2,"名前":"値","名":[],"a":{"é":true,"éa":0,"日本":null}}`},
		{"recursive", `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"size":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name","size"]}}}`,
			`{"name":"r","size":0,"kids":[{"name":"a","size":1,"kids":[{"size":0,"name":"b"}]},{"kids":[],"name":"c","size":2}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := JSONSchema([]byte(tt.schema), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ids := tok.Encode(tt.output, false)
			for run := range 2 {
				checkWholeMasks(t, c.NewState(m), m, ids, run)
			}
		})
	}
}

// chainSchema has five required members (kept in declaration order),
// optional ones and additional members of any value.
const chainSchema = `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"type":{"type":"string"},"value":{"type":"number"},"enabled":{"type":"boolean"},"idx":{"type":"array"},"note":{"type":"string","maxLength":5}},"required":["id","name","type","value","enabled"]}`

// checkWholeMasks advances s through ids, comparing the whole mask with
// Allowed before each token.
func checkWholeMasks(t *testing.T, s *State, m *Matcher, ids []int32, run int) {
	t.Helper()
	mask := make([]uint64, m.MaskWords())
	for i, id := range ids {
		s.Mask(mask)
		if raceEnabled && i%4 != run {
			// under the race detector: every 4th token, others in the second run
		} else if tid, in, ok := sameAsAllowed(s, mask); !ok {
			t.Fatalf("run %d, token %d of the output: mask says %v for token %d %q, Allowed disagrees", run, i, in, tid, m.tokens[tid])
		}
		if err := s.Advance(id); err != nil {
			t.Fatalf("run %d: token %d %q of a valid output: %v", run, i, m.tokens[id], err)
		}
	}
	if !s.IsAccepting() {
		t.Fatalf("run %d: the valid output is not accepted", run)
	}
}

// TestMaskBenchWholeMasks compares whole masks with Allowed on MaskBench
// schemas (the CI subset; every schema with -maskbench.full): for the
// first valid instance of each, at every key start (after `{"` or `,"`,
// where masks come from abstract sets and escapes) and at every 32nd
// token (under the race detector: at the key starts of every 4th token).
func TestMaskBenchWholeMasks(t *testing.T) {
	tok, m := llama3Matcher(t)
	mask := make([]uint64, m.MaskWords())
	for _, bc := range loadMaskBench(t, *maskbenchFull) {
		c, err := JSONSchema(bc.Schema, Options{})
		if err != nil {
			continue
		}
		for _, tc := range bc.Tests {
			if !tc.Valid {
				continue
			}
			doc, _ := CompactJSON(tc.Data)
			s := c.newPrivateState(m)
			var out []byte
			for i, id := range tok.Encode(string(doc), false) {
				n := len(out)
				keyStart := n >= 2 && out[n-1] == '"' && (out[n-2] == '{' || out[n-2] == ',')
				if !raceEnabled && i%32 == 0 || keyStart && (!raceEnabled || i%4 == 0) {
					s.Mask(mask)
					if tid, in, ok := sameAsAllowed(s, mask); !ok {
						t.Fatalf("%s token %d: mask says %v for token %d %q, Allowed disagrees", bc.ID, i, in, tid, m.tokens[tid])
					}
				}
				if s.Advance(id) != nil {
					break
				}
				out = append(out, m.tokens[id]...)
			}
			break
		}
	}
}

// sameAsAllowed compares mask with Allowed's answer for every token id (its
// logic run under one lock: the bytes of each token stepped through the
// automaton one by one); on a difference it returns the token and the
// mask's bit.
func sameAsAllowed(s *State, mask []uint64) (tid int32, in, ok bool) {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	for tid := range int32(s.m.size) {
		in := mask[tid>>6]&(1<<(tid&63)) != 0
		var want bool
		if s.isEOS(tid) {
			want = s.a.sets[s.cur].accept
		} else if b := s.m.tokens[tid]; b != nil {
			want = s.a.stepBytes(s.cur, b) >= 0
		}
		if in != want {
			return tid, in, false
		}
	}
	return 0, false, true
}
