package toolparser

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the type of a decoded value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNum
	kStr
	kArr
	kObj
)

// value is a decoded JSON (or Python literal) value that keeps object key
// order, as Python's json.loads does. Numbers hold their Python text: the
// digits of an int, the repr of a float.
type value struct {
	k    kind
	b    bool
	s    string  // string value, or the number's text
	arr  []value // array items, or object values
	keys []string
}

// get returns the member named key of an object.
func (v *value) get(key string) (*value, bool) {
	if v.k != kObj {
		return nil, false
	}
	for i, k := range v.keys {
		if k == key {
			return &v.arr[i], true
		}
	}
	return nil, false
}

// set adds a member, or replaces the value of an existing key in place (a
// Python dict keeps the first position of a repeated key and its last value).
func (v *value) set(key string, m value) {
	for i, k := range v.keys {
		if k == key {
			v.arr[i] = m
			return
		}
	}
	v.keys = append(v.keys, key)
	v.arr = append(v.arr, m)
}

// maxDepth bounds nesting (Python's json gives up with a RecursionError
// near 1000 levels; the bound only keeps the stack small).
const maxDepth = 512

var errSyntax = errors.New("toolparser: invalid JSON")

// parseJSON decodes exactly one JSON value that fills s but for surrounding
// whitespace, with Python's json.loads rules: NaN and Infinity are refused
// (their json.dumps form is not JSON), raw control characters in strings
// are refused (strict mode).
func parseJSON(s string) (value, error) {
	d := jsonDecoder{s: s}
	v, err := d.value(0)
	if err != nil {
		return value{}, err
	}
	d.ws()
	if d.i != len(s) {
		return value{}, errSyntax
	}
	return v, nil
}

type jsonDecoder struct {
	s string
	i int
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.s) && isJSONSpace(d.s[d.i]) {
		d.i++
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *jsonDecoder) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, errSyntax
	}
	d.ws()
	if d.i >= len(d.s) {
		return value{}, errSyntax
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		s, err := d.str()
		return value{k: kStr, s: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	for _, lit := range [...]struct {
		text string
		v    value
	}{{"true", value{k: kBool, b: true}}, {"false", value{k: kBool}}, {"null", value{}}} {
		if strings.HasPrefix(d.s[d.i:], lit.text) {
			d.i += len(lit.text)
			return lit.v, nil
		}
	}
	return value{}, errSyntax
}

func (d *jsonDecoder) object(depth int) (value, error) {
	d.i++ // {
	v := value{k: kObj}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return v, nil
	}
	for {
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return value{}, errSyntax
		}
		key, err := d.str()
		if err != nil {
			return value{}, err
		}
		d.ws()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return value{}, errSyntax
		}
		d.i++
		m, err := d.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.set(key, m)
		if done, err := d.next('}'); done || err != nil {
			return v, err
		}
	}
}

func (d *jsonDecoder) array(depth int) (value, error) {
	d.i++ // [
	v := value{k: kArr}
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return v, nil
	}
	for {
		m, err := d.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.arr = append(v.arr, m)
		if done, err := d.next(']'); done || err != nil {
			return v, err
		}
	}
}

// next consumes the separator after a member: a comma (more follow) or
// the closing bracket (done).
func (d *jsonDecoder) next(closer byte) (done bool, err error) {
	d.ws()
	if d.i >= len(d.s) {
		return false, errSyntax
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		return false, nil
	case closer:
		d.i++
		return true, nil
	}
	return false, errSyntax
}

func (d *jsonDecoder) str() (string, error) {
	d.i++ // opening quote
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		if c == '"' {
			s := d.s[start:d.i]
			d.i++
			return s, nil
		}
		if c == '\\' {
			return d.strSlow(start)
		}
		if c < 0x20 {
			return "", errSyntax
		}
		d.i++
	}
	return "", errSyntax
}

// strSlow decodes a string with escapes, from its first character.
func (d *jsonDecoder) strSlow(start int) (string, error) {
	b := []byte(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return string(b), nil
		case c < 0x20:
			return "", errSyntax
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", errSyntax
		}
		e := d.s[d.i+1]
		d.i += 2
		if r, ok := simpleEscape(e); ok {
			b = append(b, r)
			continue
		}
		if e != 'u' {
			return "", errSyntax
		}
		r, err := d.unicodeEscape()
		if err != nil {
			return "", err
		}
		b = utf8.AppendRune(b, r)
	}
	return "", errSyntax
}

func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// unicodeEscape reads the four hex digits after \u, and a low surrogate's
// \uXXXX after a high one. A lone surrogate becomes U+FFFD (Go strings
// cannot hold it).
func (d *jsonDecoder) unicodeEscape() (rune, error) {
	r, ok := hex4(d.s, d.i)
	if !ok {
		return 0, errSyntax
	}
	d.i += 4
	if utf16.IsSurrogate(r) && strings.HasPrefix(d.s[d.i:], `\u`) {
		if r2, ok := hex4(d.s, d.i+2); ok {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				d.i += 6
				return dec, nil
			}
		}
	}
	if utf16.IsSurrogate(r) {
		return utf8.RuneError, nil
	}
	return r, nil
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(n), err == nil
}

func (d *jsonDecoder) number() (value, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	intStart := d.i
	d.digits()
	if d.i == intStart || d.s[intStart] == '0' && d.i-intStart > 1 {
		return value{}, errSyntax
	}
	isFloat := false
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if !d.digits() {
			return value{}, errSyntax
		}
		isFloat = true
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return value{}, errSyntax
		}
		isFloat = true
	}
	return numberValue(d.s[start:d.i], isFloat)
}

func (d *jsonDecoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// numberValue turns a number literal into Python's text for it: an int
// keeps its digits (Python ints are unbounded; "-0" is 0), a float is
// Python's repr of the nearest double. An infinite float is refused.
func numberValue(lit string, isFloat bool) (value, error) {
	if !isFloat {
		neg := strings.HasPrefix(lit, "-")
		digits := strings.TrimLeft(strings.TrimPrefix(lit, "-"), "0")
		if digits == "" {
			return value{k: kNum, s: "0"}, nil
		}
		if neg {
			digits = "-" + digits
		}
		return value{k: kNum, s: digits}, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) || math.IsNaN(f) {
		return value{}, errSyntax
	}
	return value{k: kNum, s: pyFloat(f)}, nil
}

// pyFloat formats f as Python's repr does: the shortest digits that round
// trip, positional for decimal exponents in [-4, 16), else d.ddde±XX.
func pyFloat(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case exp < -4 || exp >= 16:
		b.WriteString(mant)
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	case exp < 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -exp-1))
		b.WriteString(digits)
	case len(digits) <= exp+1:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", exp+1-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:exp+1])
		b.WriteByte('.')
		b.WriteString(digits[exp+1:])
	}
	return b.String()
}

// dumps appends v as Python's json.dumps(v, ensure_ascii=False) writes it:
// ", " and ": " separators, keys in order, non-ASCII text as is.
func (v *value) dumps(b []byte) []byte {
	switch v.k {
	case kNull:
		return append(b, "null"...)
	case kBool:
		if v.b {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case kNum:
		return append(b, v.s...)
	case kStr:
		return appendPyString(b, v.s)
	case kArr:
		b = append(b, '[')
		for i := range v.arr {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = v.arr[i].dumps(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, k := range v.keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyString(b, k)
		b = append(b, ": "...)
		b = v.arr[i].dumps(b)
	}
	return append(b, '}')
}

func (v *value) dumpString() string { return string(v.dumps(nil)) }

// appendPyString quotes s as json.dumps(ensure_ascii=False) does.
func appendPyString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
