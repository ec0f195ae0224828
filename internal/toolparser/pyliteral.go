package toolparser

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyDecoder reads Python literals (the subset tool calls use: strings,
// numbers, True/False/None, lists, tuples, dicts) into values, as
// ast.literal_eval and vLLM's pythonic parser do. A syntax error is an
// error; a well-formed literal with no JSON form (bytes, f-strings,
// non-finite floats, non-string keys) comes back with ok false.
type pyDecoder struct {
	s string
	i int
}

var errPySyntax = errors.New("toolparser: invalid Python literal")

// parsePyLiteral reads one literal that fills s but for whitespace.
func parsePyLiteral(s string) (value, bool) {
	d := pyDecoder{s: s}
	v, ok, err := d.literal(0)
	d.ws()
	if err != nil || !ok || d.i != len(s) {
		return value{}, false
	}
	return v, true
}

func (d *pyDecoder) ws() {
	for d.i < len(d.s) && isSpace(d.s[d.i]) {
		d.i++
	}
}

// eat consumes c after whitespace.
func (d *pyDecoder) eat(c byte) bool {
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *pyDecoder) ident() string {
	d.ws()
	start := d.i
	for d.i < len(d.s) && (isAlnum(d.s[d.i]) || d.s[d.i] == '_' || d.s[d.i] >= utf8.RuneSelf) {
		d.i++
	}
	return d.s[start:d.i]
}

func (d *pyDecoder) literal(depth int) (value, bool, error) {
	if depth > maxDepth {
		return value{}, false, errPySyntax
	}
	d.ws()
	if d.i >= len(d.s) {
		return value{}, false, errPySyntax
	}
	switch c := d.s[d.i]; {
	case c == '[':
		d.i++
		return d.items(']', depth)
	case c == '(':
		d.i++
		return d.items(')', depth)
	case c == '{':
		d.i++
		return d.dict(depth)
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return d.number()
	}
	word := d.ident()
	if d.i < len(d.s) && (d.s[d.i] == '\'' || d.s[d.i] == '"') {
		return d.str(strings.ToLower(word))
	}
	switch word {
	case "True":
		return value{k: kBool, b: true}, true, nil
	case "False":
		return value{k: kBool}, true, nil
	case "None":
		return value{}, true, nil
	}
	return value{}, false, errPySyntax
}

// items reads list or tuple members up to closer (a tuple becomes a JSON
// array, as json.dumps writes it).
func (d *pyDecoder) items(closer byte, depth int) (value, bool, error) {
	v, good := value{k: kArr}, true
	for !d.eat(closer) {
		m, ok, err := d.literal(depth + 1)
		if err != nil {
			return value{}, false, err
		}
		good = good && ok
		v.arr = append(v.arr, m)
		if !d.eat(',') {
			if !d.eat(closer) {
				return value{}, false, errPySyntax
			}
			break
		}
	}
	return v, good, nil
}

func (d *pyDecoder) dict(depth int) (value, bool, error) {
	v, good := value{k: kObj}, true
	for !d.eat('}') {
		k, ok, err := d.literal(depth + 1)
		if err != nil {
			return value{}, false, err
		}
		good = good && ok && k.k == kStr
		if !d.eat(':') {
			return value{}, false, errPySyntax
		}
		m, ok, err := d.literal(depth + 1)
		if err != nil {
			return value{}, false, err
		}
		good = good && ok
		v.set(k.s, m)
		if !d.eat(',') {
			if !d.eat('}') {
				return value{}, false, errPySyntax
			}
			break
		}
	}
	return v, good, nil
}

// number reads a decimal int or float, with an optional sign.
func (d *pyDecoder) number() (value, bool, error) {
	start := d.i
	if d.s[d.i] == '-' || d.s[d.i] == '+' {
		d.i++
		d.ws()
	}
	sign := strings.TrimSpace(d.s[start:d.i])
	numStart := d.i
	isFloat := false
scan:
	for ; d.i < len(d.s); d.i++ {
		switch c := d.s[d.i]; {
		case c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E':
			isFloat = true
		case (c == '+' || c == '-') && (d.s[d.i-1] == 'e' || d.s[d.i-1] == 'E'):
		default:
			break scan
		}
	}
	lit := d.s[numStart:d.i]
	if lit == "" || d.i < len(d.s) && (isAlnum(d.s[d.i]) || d.s[d.i] == '_') {
		return value{}, false, errPySyntax // 0x1f, 1_000, 1j: not taken
	}
	if sign == "-" {
		lit = "-" + lit
	}
	if !isFloat {
		v, err := numberValue(lit, false)
		return v, err == nil, err
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return value{}, false, errPySyntax
	}
	v, err := numberValue(strconv.FormatFloat(f, 'g', -1, 64), true)
	return v, err == nil, nil
}

// str reads a string literal with an optional prefix (r, u, b, f and
// their pairs).
func (d *pyDecoder) str(prefix string) (value, bool, error) {
	raw := strings.Contains(prefix, "r")
	good := !strings.ContainsAny(prefix, "bf")
	if strings.Trim(prefix, "rubf") != "" || len(prefix) > 2 {
		return value{}, false, errPySyntax
	}
	quote := d.s[d.i]
	d.i++
	var b []byte
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == quote:
			d.i++
			return value{k: kStr, s: string(b)}, good, nil
		case c == '\n':
			return value{}, false, errPySyntax
		case c == '\\' && d.i+1 < len(d.s):
			if raw {
				b = append(b, c, d.s[d.i+1])
				d.i += 2
				continue
			}
			b = d.escape(b)
			continue
		}
		b = append(b, c)
		d.i++
	}
	return value{}, false, errPySyntax
}

// escape decodes the backslash escape at d.i.
func (d *pyDecoder) escape(b []byte) []byte {
	e := d.s[d.i+1]
	d.i += 2
	switch e {
	case '\n':
		return b
	case '\\', '\'', '"':
		return append(b, e)
	case 'n':
		return append(b, '\n')
	case 't':
		return append(b, '\t')
	case 'r':
		return append(b, '\r')
	case 'a':
		return append(b, '\a')
	case 'b':
		return append(b, '\b')
	case 'f':
		return append(b, '\f')
	case 'v':
		return append(b, '\v')
	case 'x', 'u', 'U':
		n := 2
		if e == 'u' {
			n = 4
		} else if e == 'U' {
			n = 8
		}
		if d.i+n <= len(d.s) {
			if r, err := strconv.ParseUint(d.s[d.i:d.i+n], 16, 32); err == nil {
				d.i += n
				return utf8.AppendRune(b, rune(r))
			}
		}
	}
	return append(b, '\\', e) // Python keeps unknown escapes as written
}
