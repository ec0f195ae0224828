package constraint

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Grammar compiles an EBNF grammar: llama.cpp's GBNF (rules "name ::= ...",
// start rule root, [...] character classes, . any character) or a Lark-style
// grammar as vLLM's structured_outputs.grammar takes (rules "name: ...",
// start rule start, "a".."z" ranges, /regex/ terminals, [x] optional, x~n
// and x~m..n repetition). Both have strings, ( ), |, *, +, ? and {m,n}.
// Lark directives (%import, %ignore) and left recursion are errors.
func Grammar(src string) (*Constraint, error) {
	gbnf := strings.Contains(src, "::=")
	toks, err := lexGrammar(src, gbnf)
	if err != nil {
		return nil, fmt.Errorf("constraint: %w", err)
	}
	p := &gParser{toks: toks, gbnf: gbnf, ids: map[string]int32{}}
	if err := p.parse(); err != nil {
		return nil, fmt.Errorf("constraint: grammar: %w", err)
	}
	start, ok := p.ids["root"]
	if !ok {
		if start, ok = p.ids["start"]; !ok {
			return nil, fmt.Errorf("constraint: grammar: no root (GBNF) or start (Lark) rule")
		}
	}
	prog, err := p.g.compile(start)
	if err != nil {
		return nil, fmt.Errorf("constraint: grammar: %w", err)
	}
	return &Constraint{prog: prog}, nil
}

type gParser struct {
	toks []gTok
	pos  int
	gbnf bool
	g    grammarBuilder
	ids  map[string]int32
}

func (p *gParser) peek(off int) *gTok {
	if p.pos+off < len(p.toks) {
		return &p.toks[p.pos+off]
	}
	return nil
}

func (p *gParser) isPunct(off int, s string) bool {
	t := p.peek(off)
	return t != nil && t.kind == gPunct && t.text == s
}

// defStart reports whether a rule definition starts here: name (.priority)
// then ::= or :.
func (p *gParser) defStart() bool {
	t := p.peek(0)
	if t == nil || t.kind != gIdent {
		return false
	}
	if d := p.peek(1); d != nil && d.kind == gDefine {
		return true
	}
	d := p.peek(3)
	return p.isPunct(1, ".") && p.peek(2).kind == gNumber && d != nil && d.kind == gDefine
}

// defAhead is defStart, also after Lark's ? or ! rule prefix.
func (p *gParser) defAhead() bool {
	if !p.gbnf && (p.isPunct(0, "?") || p.isPunct(0, "!")) {
		p.pos++
		ok := p.defStart()
		p.pos--
		return ok
	}
	return p.defStart()
}

func (p *gParser) rule(name string) int32 {
	if id, ok := p.ids[name]; ok {
		return id
	}
	id := p.g.newRule(name)
	p.ids[name] = id
	return id
}

func (p *gParser) parse() error {
	defined := map[string]bool{}
	for p.pos < len(p.toks) {
		if !p.gbnf && p.defAhead() && !p.defStart() {
			p.pos++ // Lark's ?rule / !rule: tree shaping only
		}
		t := p.toks[p.pos]
		if t.kind == gDirective {
			return fmt.Errorf("line %d: directive %s is not supported", t.line, t.text)
		}
		if !p.defStart() {
			return fmt.Errorf("line %d: expected a rule definition, found %q", t.line, t.text)
		}
		if defined[t.text] {
			return fmt.Errorf("line %d: rule %q defined twice", t.line, t.text)
		}
		defined[t.text] = true
		for p.toks[p.pos].kind != gDefine {
			p.pos++
		}
		p.pos++
		body, err := p.alternatives()
		if err != nil {
			return err
		}
		p.g.setRule(p.rule(t.text), body)
	}
	return nil
}

// alternatives parses a | b | c up to a closing bracket, a new definition
// or the end.
func (p *gParser) alternatives() (*expr, error) {
	var alts []*expr
	for {
		s, err := p.sequence()
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if !p.isPunct(0, "|") {
			return alt(alts...), nil
		}
		p.pos++
	}
}

func (p *gParser) sequence() (*expr, error) {
	var items []*expr
	for {
		t := p.peek(0)
		if t == nil || p.defAhead() || t.kind == gDirective || t.kind == gPunct && strings.Contains("|)]", t.text) {
			return seq(items...), nil
		}
		if p.isPunct(0, "->") { // a Lark alias: no effect on the language
			p.pos += 2
			continue
		}
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		if a, err = p.postfix(a); err != nil {
			return nil, err
		}
		items = append(items, a)
	}
}

func (p *gParser) atom() (*expr, error) {
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case gIdent:
		return ref(p.rule(t.text)), nil
	case gString:
		if p.isPunct(0, "..") && p.peek(1) != nil && p.peek(1).kind == gString {
			return p.charRange(t.text, p.toks[p.pos+1].text, t.line)
		}
		if t.fold {
			parts := make([]*expr, 0, len(t.text))
			for _, r := range t.text {
				parts = append(parts, rawChars(literalRanges(r, true)))
			}
			return seq(parts...), nil
		}
		return lit(t.text), nil
	case gClass:
		rs, err := parseClass(t.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", t.line, err)
		}
		return rawChars(rs), nil
	case gRegex:
		return larkRegex(t.text, t.line)
	case gPunct:
		return p.group(t)
	}
	return nil, fmt.Errorf("line %d: unexpected %q", t.line, t.text)
}

func (p *gParser) charRange(a, b string, line int) (*expr, error) {
	p.pos += 2
	ra, na := utf8.DecodeRuneInString(a)
	rb, nb := utf8.DecodeRuneInString(b)
	if na != len(a) || nb != len(b) || ra > rb {
		return nil, fmt.Errorf("line %d: bad range %q..%q", line, a, b)
	}
	return rawChars([]runeRange{{ra, rb}}), nil
}

// group parses ( ... ), Lark's [ ... ] (optional) and GBNF's . (any).
func (p *gParser) group(t gTok) (*expr, error) {
	switch {
	case t.text == "." && p.gbnf:
		return anyChar(), nil
	case t.text == "(" || t.text == "[":
		inner, err := p.alternatives()
		if err != nil {
			return nil, err
		}
		closer := map[string]string{"(": ")", "[": "]"}[t.text]
		if !p.isPunct(0, closer) {
			return nil, fmt.Errorf("line %d: missing %q", t.line, closer)
		}
		p.pos++
		if t.text == "[" {
			return opt(inner), nil
		}
		return inner, nil
	}
	return nil, fmt.Errorf("line %d: unexpected %q", t.line, t.text)
}

// postfix applies *, +, ?, {m,n} and Lark's ~n / ~m..n.
func (p *gParser) postfix(a *expr) (*expr, error) {
	for !p.defAhead() {
		switch {
		case p.isPunct(0, "*"):
			a = star(a)
		case p.isPunct(0, "+"):
			a = plus(a)
		case p.isPunct(0, "?"):
			a = opt(a)
		case p.isPunct(0, "{") || p.isPunct(0, "~"):
			lo, hi, err := p.repeatBounds()
			if err != nil {
				return nil, err
			}
			a = rep(a, lo, hi)
			continue
		default:
			return a, nil
		}
		p.pos++
	}
	return a, nil
}

// repeatBounds parses {m}, {m,}, {m,n}, ~m or ~m..n.
func (p *gParser) repeatBounds() (lo, hi int, err error) {
	brace := p.isPunct(0, "{")
	line := p.toks[p.pos].line
	p.pos++
	num := func() (int, bool) {
		if t := p.peek(0); t != nil && t.kind == gNumber {
			p.pos++
			n, err := strconv.Atoi(t.text)
			return n, err == nil && n <= maxRepeat
		}
		return 0, false
	}
	lo, ok := num()
	if !ok {
		return 0, 0, fmt.Errorf("line %d: bad repetition count", line)
	}
	hi = lo
	sep := map[bool]string{true: ",", false: ".."}[brace]
	if p.isPunct(0, sep) {
		p.pos++
		if hi, ok = num(); !ok {
			if !brace {
				return 0, 0, fmt.Errorf("line %d: bad repetition count", line)
			}
			hi = -1
		}
	}
	if brace {
		if !p.isPunct(0, "}") {
			return 0, 0, fmt.Errorf("line %d: missing }", line)
		}
		p.pos++
	}
	return lo, hi, nil
}
