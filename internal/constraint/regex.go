package constraint

import (
	"fmt"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// charEncoder turns one character class into the expr of its encodings:
// raw UTF-8 for a regex constraint, JSON string escapes inside a JSON
// string.
type charEncoder func(rs []runeRange) *expr

// rawChars encodes characters as their UTF-8 bytes.
func rawChars(rs []runeRange) *expr { return utf8Ranges(rs) }

// regexTranslator turns a parsed regex into an expr.
type regexTranslator struct {
	enc charEncoder
}

// errAnchor is returned for an anchor the constraint cannot place.
var errAnchor = fmt.Errorf("anchors (^, $, \\b) are supported only at the start and end of the pattern")

// parseRegex parses a Go/RE2 regex (Perl flags).
func parseRegex(pattern string) (*syntax.Regexp, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return re.Simplify(), nil
}

// fullMatch is the language of strings that match re entirely (anchors at
// the very start and end are redundant and dropped).
func (t *regexTranslator) fullMatch(re *syntax.Regexp) (*expr, error) {
	body, _, _, err := t.stripAnchors(re)
	if err != nil {
		return nil, err
	}
	return t.translate(body)
}

// containing is the language of strings containing a match of re, as JSON
// Schema's pattern means.
func (t *regexTranslator) containing(re *syntax.Regexp) (*expr, error) {
	switch re.Op {
	case syntax.OpAlternate:
		alts := make([]*expr, len(re.Sub))
		for i, s := range re.Sub {
			e, err := t.containing(s)
			if err != nil {
				return nil, err
			}
			alts[i] = e
		}
		return alt(alts...), nil
	case syntax.OpCapture:
		return t.containing(re.Sub[0])
	}
	body, start, end, err := t.stripAnchors(re)
	if err != nil {
		return nil, err
	}
	e, err := t.translate(body)
	if err != nil {
		return nil, err
	}
	anyStr := star(t.enc([]runeRange{{0, utf8.MaxRune}}))
	if !start {
		e = seq(anyStr, e)
	}
	if !end {
		e = seq(e, anyStr)
	}
	return e, nil
}

// stripAnchors removes a leading ^ and a trailing $ of a concatenation.
func (t *regexTranslator) stripAnchors(re *syntax.Regexp) (body *syntax.Regexp, start, end bool, err error) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	switch re.Op {
	case syntax.OpBeginText:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}, true, false, nil
	case syntax.OpEndText:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}, false, true, nil
	case syntax.OpConcat:
	default:
		return re, false, false, nil
	}
	subs := re.Sub
	for len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs, start = subs[1:], true
	}
	for len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		subs, end = subs[:len(subs)-1], true
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}, start, end, nil
}

// translate converts re; anchors left inside are an error.
func (t *regexTranslator) translate(re *syntax.Regexp) (*expr, error) {
	switch re.Op {
	case syntax.OpNoMatch:
		return noneExpr, nil
	case syntax.OpEmptyMatch:
		return emptyExpr, nil
	case syntax.OpLiteral:
		parts := make([]*expr, len(re.Rune))
		for i, r := range re.Rune {
			parts[i] = t.enc(literalRanges(r, re.Flags&syntax.FoldCase != 0))
		}
		return seq(parts...), nil
	case syntax.OpCharClass:
		rs := make([]runeRange, 0, len(re.Rune)/2)
		for i := 0; i+1 < len(re.Rune); i += 2 {
			rs = append(rs, runeRange{re.Rune[i], re.Rune[i+1]})
		}
		return t.enc(rs), nil
	case syntax.OpAnyCharNotNL:
		return t.enc([]runeRange{{0, '\n' - 1}, {'\n' + 1, utf8.MaxRune}}), nil
	case syntax.OpAnyChar:
		return t.enc([]runeRange{{0, utf8.MaxRune}}), nil
	case syntax.OpCapture:
		return t.translate(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return t.repeat(re)
	case syntax.OpConcat, syntax.OpAlternate:
		subs := make([]*expr, len(re.Sub))
		for i, s := range re.Sub {
			e, err := t.translate(s)
			if err != nil {
				return nil, err
			}
			subs[i] = e
		}
		if re.Op == syntax.OpConcat {
			return seq(subs...), nil
		}
		return alt(subs...), nil
	}
	return nil, errAnchor
}

func (t *regexTranslator) repeat(re *syntax.Regexp) (*expr, error) {
	e, err := t.translate(re.Sub[0])
	if err != nil {
		return nil, err
	}
	switch re.Op {
	case syntax.OpStar:
		return star(e), nil
	case syntax.OpPlus:
		return plus(e), nil
	case syntax.OpQuest:
		return opt(e), nil
	}
	return rep(e, re.Min, re.Max), nil
}

// literalRanges is r, with its case variants when fold.
func literalRanges(r rune, fold bool) []runeRange {
	rs := []runeRange{{r, r}}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			rs = append(rs, runeRange{f, f})
		}
	}
	return rs
}

// Regex compiles a regular expression (RE2 syntax, as Go's regexp) that the
// whole output must match.
func Regex(pattern string) (*Constraint, error) {
	re, err := parseRegex(pattern)
	if err != nil {
		return nil, fmt.Errorf("constraint: regex: %w", err)
	}
	t := regexTranslator{enc: rawChars}
	e, err := t.fullMatch(re)
	if err != nil {
		return nil, fmt.Errorf("constraint: regex %q: %w", pattern, err)
	}
	return single("regex", e)
}

// Choice compiles a list of exact alternatives (vLLM's choice).
func Choice(choices []string) (*Constraint, error) {
	if len(choices) == 0 {
		return nil, fmt.Errorf("constraint: choice: empty list")
	}
	alts := make([]*expr, len(choices))
	for i, c := range choices {
		alts[i] = lit(c)
	}
	return single("choice", alt(alts...))
}

// single compiles a grammar of one rule.
func single(name string, e *expr) (*Constraint, error) {
	if e.kind == eNone {
		return nil, fmt.Errorf("constraint: %s matches no string", name)
	}
	var g grammarBuilder
	id := g.newRule(name)
	g.setRule(id, e)
	p, err := g.compile(id)
	if err != nil {
		return nil, fmt.Errorf("constraint: %s: %w", name, err)
	}
	return &Constraint{prog: p}, nil
}
