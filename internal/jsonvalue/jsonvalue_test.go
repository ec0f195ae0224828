package jsonvalue

import (
	"encoding/json"
	"testing"
)

// Round trips compare with the input text itself: key order and number
// spelling must survive, as Python's json.loads/json.dumps keep them.
func TestRoundTripKeepsOrder(t *testing.T) {
	for _, in := range []string{
		`{"z":1,"a":{"y":[1,2.5,"x"],"b":null},"m":true}`,
		`{"type":"object","properties":{"location":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["location"]}`,
		`[]`,
		`{}`,
		`{"ünï":"✓","big":9007199254740993}`,
	} {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("round trip\n got %s\nwant %s", out, in)
		}
	}
}

func TestDuplicateKeyKeepsFirstPositionLastValue(t *testing.T) {
	v, err := Parse([]byte(`{"a":1,"b":2,"a":3}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"a":3,"b":2}` {
		t.Fatalf("got %s", out)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `{} {}`, `{"a":1]`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// A non-object where an Object is expected is a type error naming the
// field, like any other encoding/json type mismatch.
func TestObjectFieldTypeError(t *testing.T) {
	var v struct {
		K *Object `json:"kw"`
	}
	err := json.Unmarshal([]byte(`{"kw": [1]}`), &v)
	te, ok := err.(*json.UnmarshalTypeError)
	if !ok || te.Field != "kw" || te.Value != "array" {
		t.Fatalf("got %#v", err)
	}
	if err := json.Unmarshal([]byte(`{"kw": null}`), &v); err != nil || v.K != nil {
		t.Fatalf("null: %v %v", err, v.K)
	}
}
