package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Object is a JSON object that remembers the order of its keys.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set adds key (at the end) or replaces its value (keeping its position).
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Keys returns the keys in order (the caller must not modify the slice).
func (o *Object) Keys() []string { return o.keys }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// MarshalJSON writes the object with its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object into o, replacing its contents.
func (o *Object) UnmarshalJSON(b []byte) error {
	v, err := Parse(b)
	if err != nil {
		return err
	}
	obj, ok := v.(*Object)
	if !ok {
		// A type error, so encoding/json names the field that holds it.
		return &json.UnmarshalTypeError{Value: kindOf(v), Type: reflect.TypeFor[Object]()}
	}
	*o = *obj
	return nil
}

// Parse decodes one JSON value (see the package invariants for the types).
func Parse(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("jsonvalue: unexpected data after the value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch d {
	case '{':
		return parseObject(dec)
	case '[':
		return parseArray(dec)
	}
	return nil, fmt.Errorf("jsonvalue: unexpected %q", d)
}

func parseObject(dec *json.Decoder) (*Object, error) {
	o := NewObject()
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := parseValue(dec)
		if err != nil {
			return nil, err
		}
		o.Set(t.(string), v)
	}
	_, err := dec.Token() // '}'
	return o, err
}

func parseArray(dec *json.Decoder) ([]any, error) {
	out := []any{}
	for dec.More() {
		v, err := parseValue(dec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	_, err := dec.Token() // ']'
	return out, err
}

// kindOf names the JSON kind of a parsed value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	}
	return "object"
}
