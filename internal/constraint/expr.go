package constraint

// exprKind tells what an expr denotes.
type exprKind uint8

const (
	eEmpty exprKind = iota // the empty string
	eNone                  // no string at all (the empty language)
	eBytes                 // one byte in ranges
	eSeq                   // concatenation of subs
	eAlt                   // union of subs
	eRep                   // subs[0] repeated min..max times (max < 0: unbounded)
	eRef                   // the rule numbered rule
)

// byteRange is an inclusive range of bytes.
type byteRange struct{ lo, hi byte }

// expr is a regular expression over bytes whose atoms may also be rule
// references: the right-hand side of a grammar rule.
type expr struct {
	kind     exprKind
	ranges   []byteRange
	subs     []*expr
	min, max int
	rule     int32
}

var (
	emptyExpr = &expr{kind: eEmpty}
	noneExpr  = &expr{kind: eNone}
)

// lit is the byte string s.
func lit(s string) *expr {
	if len(s) == 0 {
		return emptyExpr
	}
	if len(s) == 1 {
		return byteIn(byteRange{s[0], s[0]})
	}
	subs := make([]*expr, len(s))
	for i := range len(s) {
		subs[i] = byteIn(byteRange{s[i], s[i]})
	}
	return &expr{kind: eSeq, subs: subs}
}

// byteIn is one byte in any of ranges.
func byteIn(ranges ...byteRange) *expr {
	if len(ranges) == 0 {
		return noneExpr
	}
	return &expr{kind: eBytes, ranges: ranges}
}

// byteSet is one byte among the characters of s (all ASCII).
func byteSet(s string) *expr {
	r := make([]byteRange, len(s))
	for i := range len(s) {
		r[i] = byteRange{s[i], s[i]}
	}
	return byteIn(r...)
}

// seq concatenates es, simplifying empty and none operands.
func seq(es ...*expr) *expr {
	out := make([]*expr, 0, len(es))
	for _, e := range es {
		switch e.kind {
		case eNone:
			return noneExpr
		case eEmpty:
			continue
		case eSeq:
			out = append(out, e.subs...)
		default:
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return emptyExpr
	case 1:
		return out[0]
	}
	return &expr{kind: eSeq, subs: out}
}

// alt is the union of es, dropping empty-language operands.
func alt(es ...*expr) *expr {
	out := make([]*expr, 0, len(es))
	for _, e := range es {
		switch e.kind {
		case eNone:
			continue
		case eAlt:
			out = append(out, e.subs...)
		default:
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return noneExpr
	case 1:
		return out[0]
	}
	return &expr{kind: eAlt, subs: out}
}

// rep repeats e between min and max times (max < 0: unbounded).
func rep(e *expr, min, max int) *expr {
	if max >= 0 && max < min {
		return noneExpr
	}
	if max == 0 || e.kind == eEmpty {
		return emptyExpr
	}
	if e.kind == eNone {
		if min == 0 {
			return emptyExpr
		}
		return noneExpr
	}
	if min == 1 && max == 1 {
		return e
	}
	return &expr{kind: eRep, subs: []*expr{e}, min: min, max: max}
}

func opt(e *expr) *expr  { return rep(e, 0, 1) }
func star(e *expr) *expr { return rep(e, 0, -1) }
func plus(e *expr) *expr { return rep(e, 1, -1) }

// ref refers to rule id.
func ref(id int32) *expr { return &expr{kind: eRef, rule: id} }
