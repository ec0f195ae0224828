package constraint

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// byteVocab has one token per byte value, then EOS: random walks over it
// reach every byte string the constraint allows.
type byteVocab struct{}

func (byteVocab) Size() int                  { return 257 }
func (byteVocab) TokenBytes(id int32) []byte { return []byte{byte(id)} }
func (byteVocab) IsSpecial(id int32) bool    { return id == 256 }
func (byteVocab) EOSIDs() []int32            { return []int32{256} }

// closers are the bytes a walk prefers once it is long, so it ends.
const closers = "\"}],0"

// randomOutput walks c with random allowed bytes until EOS; ok is false if
// it did not end within maxLen bytes.
func randomOutput(c *Constraint, m *Matcher, rng *rand.Rand, maxLen int) (out []byte, ok bool) {
	s := c.NewState(m)
	mask := make([]uint64, m.MaskWords())
	var allowed []int32
	for len(out) < maxLen {
		s.Mask(mask)
		allowed = allowed[:0]
		for id := range int32(257) {
			if mask[id>>6]&(1<<(id&63)) != 0 {
				allowed = append(allowed, id)
			}
		}
		if len(allowed) == 0 {
			return out, false // a dead end: reported by the caller
		}
		id := pickToken(allowed, len(out), maxLen, rng)
		if id == 256 {
			return out, true
		}
		if err := s.Advance(id); err != nil {
			panic(err)
		}
		out = append(out, byte(id))
	}
	return out, false
}

// pickToken takes EOS often when allowed, and prefers closing bytes in the
// second half of the budget.
func pickToken(allowed []int32, n, maxLen int, rng *rand.Rand) int32 {
	last := allowed[len(allowed)-1]
	if last == 256 && rng.IntN(3) == 0 {
		return 256
	}
	if n > maxLen/4 {
		var close []int32
		for _, id := range allowed {
			if id == 256 || id < 256 && bytes.IndexByte([]byte(closers), byte(id)) >= 0 {
				close = append(close, id)
			}
		}
		if len(close) > 0 && rng.IntN(4) != 0 {
			return close[rng.IntN(len(close))]
		}
	}
	return allowed[rng.IntN(len(allowed))]
}

// compileReference compiles schema with the validator library, asserting
// formats.
func compileReference(tb testing.TB, schema []byte) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("urn:test.json", doc); err != nil {
		tb.Fatal(err)
	}
	sch, err := c.Compile("urn:test.json")
	if err != nil {
		tb.Fatal(err)
	}
	return sch
}

// checkRandomOutputs validates n random outputs of the compiled schema with
// the validator library: a constraint must never allow an invalid output.
// Unless mustCompile, a schema refused as unsupported or invalid is skipped.
func checkRandomOutputs(t *testing.T, name string, schema []byte, n, maxLen int, seed uint64, mustCompile bool) {
	t.Helper()
	c, err := JSONSchema(schema, Options{MaxWhitespace: 2})
	if err != nil {
		var u *UnsupportedError
		if !mustCompile && (errors.As(err, &u) || errors.Is(err, ErrInvalidSchema)) {
			return
		}
		t.Fatalf("%s: %v", name, err)
	}
	ref := compileReference(t, schema)
	m, err := NewMatcher(byteVocab{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	ended := 0
	for range n {
		out, ok := randomOutput(c, m, rng, maxLen)
		if !ok {
			continue
		}
		ended++
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Errorf("%s: output is not JSON: %q: %v", name, out, err)
			continue
		}
		if err := ref.Validate(inst); err != nil {
			t.Errorf("%s: output violates the schema: %q: %v", name, out, err)
		}
	}
	if ended == 0 {
		t.Logf("%s: no random output ended within %d bytes (nothing checked)", name, maxLen)
	}
}

// soundnessSchemas exercise each supported feature.
var soundnessSchemas = []struct{ name, schema string }{
	{"formats", `{"type":"object","properties":{"d":{"type":"string","format":"date"},"t":{"type":"string","format":"time"},"dt":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uuid"},"ip":{"type":"string","format":"ipv4"},"e":{"type":"string","format":"email"},"h":{"type":"string","format":"hostname"},"uri":{"type":"string","format":"uri"}},"required":["d","t","dt","u","ip","e","h","uri"],"additionalProperties":false}`},
	{"integer ranges", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer","minimum":-37,"maximum":1234},{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":10},{"type":"integer","minimum":100}],"minItems":3,"additionalItems":false}`},
	{"number ranges", `{"type":"array","prefixItems":[{"type":"number","minimum":-1.5,"maximum":2.5},{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},{"type":"number","minimum":3,"exclusiveMaximum":3.5},{"type":"number","maximum":-2}],"items":false,"minItems":4}`},
	{"decimal bounds", `{"type":"array","prefixItems":[{"type":"number","minimum":0.01,"maximum":2.5},{"type":"number","exclusiveMinimum":-1.25,"exclusiveMaximum":0.3},{"type":"number","minimum":-7.05,"maximum":-0.5},{"type":"number","exclusiveMinimum":1e-3}],"items":false,"minItems":4}`},
	{"draft4 exclusive", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":1,"exclusiveMinimum":true,"maximum":3,"exclusiveMaximum":true}`},
	{"multipleOf", `{"type":"array","items":{"anyOf":[{"type":"integer","multipleOf":7},{"type":"number","multipleOf":0.01,"minimum":0,"maximum":5}]}}`},
	{"lengths", `{"type":"array","items":{"type":"string","minLength":2,"maxLength":4},"minItems":1,"maxItems":3}`},
	{"patterns", `{"type":"array","items":{"anyOf":[{"type":"string","pattern":"^[a-z]+-\\d{2}$"},{"type":"string","pattern":"é.x"},{"type":"string","pattern":"^\\S+\\s\\w$"}]}}`},
	{"additional keys", `{"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"boolean"}},"additionalProperties":{"type":"null"}}`},
	{"required extra", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a","zz"],"additionalProperties":{"type":"string","maxLength":2}}`},
	{"oneOf disjoint", `{"oneOf":[{"type":"object","properties":{"kind":{"const":"x"},"v":{"type":"integer"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"y"}},"required":["kind"]},{"type":"string"}]}`},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer","minimum":0}},"required":["a"]},{"properties":{"a":{"maximum":9},"b":{"type":"string","enum":["p","q"]}},"required":["b"]}]}`},
	{"recursive ref", `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"}`},
	{"enum const", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"enum":["a",1,null,{"k":[true]}]},{"const":"c\"q"},{"type":"string","enum":["s",2]}],"minItems":3,"maxItems":3}`},
	{"any", `{"type":"object","properties":{"x":{}},"required":["x"]}`},
	{"not", `{"type":"object","properties":{"a":{"not":{"type":["string","object","array","number"]}},"b":{"not":{}},"c":{"type":"integer"}},"not":{"required":["c"]}}`},
	{"patternProperties", `{"type":"object","properties":{"id":{"type":"integer"}},"patternProperties":{"^x-[a-z]{1,3}$":{"type":"boolean"},"^y\\d$":{"type":"boolean"}},"additionalProperties":false}`},
	{"types", `{"type":["string","integer","null"],"minLength":1,"maxLength":3,"minimum":4}`},
}

func TestRandomOutputsValidate(t *testing.T) {
	for i, s := range soundnessSchemas {
		t.Run(s.name, func(t *testing.T) {
			checkRandomOutputs(t, s.name, []byte(s.schema), 60, 600, uint64(i), true)
		})
	}
}

// TestRandomOutputsValidateMaskBench walks the CI subset of MaskBench.
func TestRandomOutputsValidateMaskBench(t *testing.T) {
	for i, bc := range loadMaskBench(t, false) {
		checkRandomOutputs(t, bc.ID, bc.Schema, 8, 3000, uint64(i), false)
	}
}
