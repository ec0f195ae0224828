package constraint

import (
	"errors"
	"strings"
	"testing"
)

func TestUnsupportedFeaturesAreErrors(t *testing.T) {
	tests := []struct{ schema, feature string }{
		{`{"type":"array","uniqueItems":true}`, "uniqueItems"},
		{`{"type":"string","format":"ipv6"}`, "format: ipv6"},
		{`{"oneOf":[{"type":"string"},{"type":"string","maxLength":3}]}`, "oneOf"},
		{`{"type":"object","patternProperties":{"^a":{}}}`, "patternProperties"},
		{`{"not":{"enum":[1]}}`, "not"},
		{`{"type":"object","properties":{"a":{}},"dependentRequired":{"a":["b"]}}`, "dependentRequired"},
		{`{"if":{"type":"string"},"then":{"maxLength":2}}`, "if/then/else"},
		{`{"type":"string","pattern":"a\\bb"}`, "pattern"},
		{`{"type":"string","pattern":"^a+$","maxLength":4}`, "pattern with minLength/maxLength"},
		{`{"type":"integer","multipleOf":3,"minimum":1}`, "multipleOf"},
		{`{"type":"number","multipleOf":0.3}`, "multipleOf"},
		{`{"$defs":{"a":{"$anchor":"x","type":"string"}},"$ref":"#x"}`, "$ref to an anchor"},
		{`{"allOf":[{"type":"string","pattern":"a"},{"pattern":"b"}]}`, "allOf merging"},
		{`{"type":"object","minProperties":2}`, "minProperties"},
	}
	for _, tt := range tests {
		_, err := JSONSchema([]byte(tt.schema), Options{})
		var u *UnsupportedError
		if !errors.As(err, &u) || !strings.Contains(u.Feature, tt.feature) {
			t.Errorf("%s: error %v, want an UnsupportedError naming %q", tt.schema, err, tt.feature)
		}
	}
}

func TestInvalidSchemasAreErrors(t *testing.T) {
	for _, s := range []string{`{"type":"strin"}`, `{"minLength":-1}`, `{"pattern":"("}`, `[1]`, `{"$ref":"#/$defs/missing"}`} {
		if _, err := JSONSchema([]byte(s), Options{}); err == nil {
			t.Errorf("%s compiled; want an error", s)
		}
	}
}

func TestCompactAndWhitespaceCap(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`)
	compact, err := JSONSchema(schema, Options{Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	capped, err := JSONSchema(schema, Options{MaxWhitespace: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		c    *Constraint
		s    string
		want bool
	}{
		{compact, `{"a":1}`, true}, {compact, `{"a": 1}`, false},
		{capped, ` {"a" :  1 } `, true}, {capped, `{"a":   1}`, false},
	} {
		if got := accepts(t, tt.c, tt.s); got != tt.want {
			t.Errorf("%q: accepted = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestMemberOrder(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`)
	free, err := JSONSchema(schema, Options{Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	ordered, err := JSONSchema(schema, Options{Compact: true, OrderedProperties: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		s             string
		free, ordered bool
	}{
		{`{"a":1,"b":2}`, true, true},
		{`{"b":2,"a":1}`, true, false},
		{`{"c":3,"b":2,"a":1}`, true, false},
		{`{"a":1,"c":3}`, false, false},
		{`{"a":1,"b":2,"d":4}`, false, false},
	} {
		if got := accepts(t, free, tt.s); got != tt.free {
			t.Errorf("any order: %s accepted = %v, want %v", tt.s, got, tt.free)
		}
		if got := accepts(t, ordered, tt.s); got != tt.ordered {
			t.Errorf("ordered: %s accepted = %v, want %v", tt.s, got, tt.ordered)
		}
	}
}
