package constraint

import (
	"fmt"
	"unicode/utf8"
)

// jsonChars encodes a character class inside a JSON string in canonical
// form: raw UTF-8, and the one escape of '"', '\\' and each control
// character. Constrained strings (patterns, lengths, formats, keys that must
// differ from given ones) use only this form, so that one character of the
// output is one character of the value.
func jsonChars(rs []runeRange) *expr {
	var raw []runeRange
	var alts []*expr
	for _, r := range rs {
		if r.lo == 0 && r.hi >= 0x1F {
			alts = append(alts, controlEscapes)
		} else {
			for c := r.lo; c <= r.hi && c < 0x20; c++ {
				alts = append(alts, lit(escapeRune(c)))
			}
		}
		for _, special := range []rune{'"', '\\'} {
			if r.lo <= special && special <= r.hi {
				alts = append(alts, lit(escapeRune(special)))
			}
		}
		raw = append(raw, subtractRunes(runeRange{max(r.lo, 0x20), r.hi}, '"', '\\')...)
	}
	return alt(append(alts, utf8Ranges(raw))...)
}

// controlEscapes is the canonical escape of every control character:
// \b \t \n \f \r, else \u00xx in lowercase hex.
var controlEscapes = seq(lit(`\`), alt(byteSet("btnfr"), seq(lit("u00"), alt(
	seq(lit("0"), byteIn(byteRange{'0', '7'}, byteRange{'b', 'b'}, byteRange{'e', 'f'})),
	seq(lit("1"), byteIn(byteRange{'0', '9'}, byteRange{'a', 'f'}))))))

// subtractRunes removes the (sorted) runes cut from r.
func subtractRunes(r runeRange, cut ...rune) []runeRange {
	var out []runeRange
	for _, c := range cut {
		if r.lo > r.hi {
			break
		}
		if c < r.lo || c > r.hi {
			continue
		}
		if c > r.lo {
			out = append(out, runeRange{r.lo, c - 1})
		}
		r.lo = c + 1
	}
	if r.lo <= r.hi {
		out = append(out, r)
	}
	return out
}

// anyJSONChar is one character of a JSON string in any legal form (raw or
// any escape), for strings without constraints.
func anyJSONChar() *expr {
	hex := byteIn(byteRange{'0', '9'}, byteRange{'a', 'f'}, byteRange{'A', 'F'})
	esc := seq(lit(`\`), alt(byteSet(`"\/bfnrt`), seq(lit("u"), hex, hex, hex, hex)))
	raw := utf8Ranges([]runeRange{{0x20, '"' - 1}, {'"' + 1, '\\' - 1}, {'\\' + 1, utf8.MaxRune}})
	return alt(raw, esc)
}

// anyJSONString is any JSON string, quotes included.
func anyJSONString() *expr { return seq(lit(`"`), star(anyJSONChar()), lit(`"`)) }

var (
	digit    = byteIn(byteRange{'0', '9'})
	digit19  = byteIn(byteRange{'1', '9'})
	natural  = alt(lit("0"), seq(digit19, star(digit))) // no leading zero
	fraction = seq(lit("."), plus(digit))
	exponent = seq(byteSet("eE"), opt(byteSet("+-")), plus(digit))
)

// anyJSONNumber is any JSON number.
func anyJSONNumber() *expr { return seq(opt(lit("-")), natural, opt(fraction), opt(exponent)) }

// whitespace is the expr between JSON tokens.
func (o *Options) whitespace() *expr {
	if o.Compact {
		return emptyExpr
	}
	n := o.MaxWhitespace
	if n <= 0 {
		n = DefaultMaxWhitespace
	}
	return rep(byteSet(" \t\n\r"), 0, n)
}

// DefaultMaxWhitespace caps a run of whitespace between JSON tokens, so a
// model cannot emit whitespace forever.
const DefaultMaxWhitespace = 20

// Options tunes the JSON grammars.
type Options struct {
	// Compact forbids whitespace between JSON tokens.
	Compact bool
	// MaxWhitespace caps each run of whitespace (0: DefaultMaxWhitespace).
	MaxWhitespace int
	// OrderedProperties makes object members follow the schema's
	// properties order, additional properties last (as LLGuidance and
	// XGrammar emit them). By default optional and additional members may
	// come anywhere, and required ones too when there are at most three
	// (else in that order among themselves): real documents (and
	// MaskBench's valid instances) do not always follow it.
	OrderedProperties bool
}

// jsonGrammar holds the shared rules of JSON grammars: whitespace and the
// "any JSON value" rule (built on first use).
type jsonGrammar struct {
	g        grammarBuilder
	ws       *expr
	anyValue int32
}

func newJSONGrammar(o Options) *jsonGrammar {
	return &jsonGrammar{ws: o.whitespace(), anyValue: -1}
}

// value returns a reference to the rule matching any JSON value.
func (j *jsonGrammar) value() *expr {
	if j.anyValue >= 0 {
		return ref(j.anyValue)
	}
	j.anyValue = j.g.newRule("value")
	v := ref(j.anyValue)
	obj := j.container("{", "}", seq(anyJSONString(), j.ws, lit(":"), j.ws, v))
	arr := j.container("[", "]", v)
	j.g.setRule(j.anyValue, alt(obj, arr, anyJSONString(), anyJSONNumber(), lit("true"), lit("false"), lit("null")))
	return v
}

// container is open ws [item (ws , ws item)*] ws close.
func (j *jsonGrammar) container(open, close string, item *expr) *expr {
	items := seq(item, star(seq(j.ws, lit(","), j.ws, item)))
	return seq(lit(open), j.ws, opt(seq(items, j.ws)), lit(close))
}

// JSONObject compiles "any JSON object" (response_format json_object).
func JSONObject(o Options) (*Constraint, error) {
	j := newJSONGrammar(o)
	j.value()
	obj := j.container("{", "}", seq(anyJSONString(), j.ws, lit(":"), j.ws, ref(j.anyValue)))
	return j.finish(obj, "json_object")
}

// finish makes e, with whitespace around it, the start rule.
func (j *jsonGrammar) finish(e *expr, name string) (*Constraint, error) {
	if e.kind == eNone {
		return nil, fmt.Errorf("constraint: %s: no JSON value satisfies it", name)
	}
	root := j.g.newRule(name)
	j.g.setRule(root, seq(j.ws, e, j.ws))
	p, err := j.g.compile(root)
	if err != nil {
		return nil, fmt.Errorf("constraint: %s: %w", name, err)
	}
	return &Constraint{prog: p}, nil
}
