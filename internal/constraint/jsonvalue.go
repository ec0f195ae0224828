package constraint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object that keeps its keys in document order (schemas
// list properties in the order the output must follow).
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) clone() *object {
	c := &object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

func newObject() *object { return &object{vals: map[string]any{}} }

// parseJSON decodes one JSON document into *object, []any, json.Number,
// string, bool and nil.
func parseJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := parseValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func parseValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := newObject()
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return t, nil
}

// compactJSON writes v as compact JSON, keys in order, strings in the
// canonical form the constrained strings use (raw UTF-8; escapes only for
// '"', '\\' and control characters).
func compactJSON(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case json.Number:
		buf.WriteString(string(v))
	case string:
		buf.WriteByte('"')
		buf.WriteString(canonicalString(v))
		buf.WriteByte('"')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			compactJSON(buf, e)
		}
		buf.WriteByte(']')
	case *object:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			compactJSON(buf, k)
			buf.WriteByte(':')
			compactJSON(buf, v.vals[k])
		}
		buf.WriteByte('}')
	default:
		panic(fmt.Sprintf("constraint: unexpected JSON value %T", v))
	}
}

// CompactJSON re-serializes a JSON document compactly, keeping key order,
// in the canonical string form (the form a valid instance is checked in).
func CompactJSON(doc []byte) ([]byte, error) {
	v, err := parseJSON(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	compactJSON(&buf, v)
	return buf.Bytes(), nil
}

func jsonText(v any) string {
	var buf bytes.Buffer
	compactJSON(&buf, v)
	return buf.String()
}

// shortEscapes are the two-character escapes of control characters.
var shortEscapes = map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// canonicalString is s's JSON string body in canonical form. Invalid UTF-8
// becomes U+FFFD, as encoding/json decodes it.
func canonicalString(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, escapeRune(r)...)
	}
	return string(b)
}

func escapeRune(r rune) string {
	switch {
	case r == '"':
		return `\"`
	case r == '\\':
		return `\\`
	case r < 0x20:
		if e, ok := shortEscapes[r]; ok {
			return e
		}
		return fmt.Sprintf(`\u%04x`, r)
	}
	var b [utf8.UTFMax]byte
	return string(b[:utf8.EncodeRune(b[:], r)])
}
