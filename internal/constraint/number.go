package constraint

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// bound is an integer bound on a number (set: present; excl: strict).
type bound struct {
	v         int64
	set, excl bool
}

func (b bound) neg() bound { return bound{-b.v, b.set, b.excl} }

// fracs are the fraction parts a number's integer part may take: any
// fraction, one equal to zero, one above zero.
type fracs struct{ any, zero, nonzero *expr }

var (
	intFracs = fracs{any: emptyExpr, zero: emptyExpr, nonzero: noneExpr}
	numFracs = fracs{
		any:     opt(fraction),
		zero:    opt(seq(lit("."), plus(lit("0")))),
		nonzero: seq(lit("."), star(lit("0")), digit19, star(digit)),
	}
)

// decimalFracs limits fractions to d digits (multipleOf 10^-d).
func decimalFracs(d int) fracs {
	var nz []*expr
	for k := range d {
		nz = append(nz, seq(rep(lit("0"), k, k), digit19, rep(digit, 0, d-1-k)))
	}
	return fracs{
		any:     opt(seq(lit("."), rep(digit, 1, d))),
		zero:    opt(seq(lit("."), rep(lit("0"), 1, d))),
		nonzero: seq(lit("."), alt(nz...)),
	}
}

// numberType compiles type number or integer with minimum, maximum, their
// exclusive forms (numbers or draft-4 booleans) and multipleOf. Bounds are
// rounded inwards to integers and exponents are not produced when bounded,
// so the output always satisfies the schema.
func (c *schemaCompiler) numberType(o *object, path string, integer bool) (*expr, error) {
	lo, hi, err := bounds(o, path, integer)
	if err != nil {
		return nil, err
	}
	fr := numFracs
	if integer {
		fr = intFracs
	}
	if m, ok := o.get("multipleOf"); ok {
		k, d, err := parseMultiple(m, path)
		if err != nil {
			return nil, err
		}
		switch {
		case k == 1:
			fr = intFracs
		case k > 1 && (lo.set || hi.set):
			return nil, unsupported(path, "multipleOf %v with minimum/maximum", m)
		case k > 1:
			nat := c.multiples(k)
			return alt(nat, seq(lit("-"), nat)), nil
		case !integer:
			fr = decimalFracs(d)
		}
	}
	if !lo.set && !hi.set && fr.any == numFracs.any {
		return anyJSONNumber(), nil
	}
	return alt(side(lo, hi, fr), seq(lit("-"), side(hi.neg(), lo.neg(), fr))), nil
}

// side is the numbers x >= 0, written without a sign, with lo <= x <= hi
// (strict where excl).
func side(lo, hi bound, fr fracs) *expr {
	if hi.set && hi.v < 0 {
		return noneExpr
	}
	l, lexcl := int64(0), false
	if lo.set && lo.v >= 0 {
		l, lexcl = lo.v, lo.excl
	}
	var parts []*expr
	start := l
	if lexcl {
		if !hi.set || l < hi.v {
			parts = append(parts, seq(lit(strconv.FormatInt(l, 10)), fr.nonzero))
		}
		start = l + 1
	}
	if !hi.set {
		return alt(append(parts, seq(natRange(start, -1), fr.any))...)
	}
	if start <= hi.v-1 {
		parts = append(parts, seq(natRange(start, hi.v-1), fr.any))
	}
	if !hi.excl && hi.v >= start {
		parts = append(parts, seq(lit(strconv.FormatInt(hi.v, 10)), fr.zero))
	}
	return alt(parts...)
}

// bounds reads the lower and upper bounds of o.
func bounds(o *object, path string, integer bool) (lo, hi bound, err error) {
	for _, kw := range []struct {
		key        string
		upper, exc bool
	}{{"minimum", false, false}, {"exclusiveMinimum", false, true}, {"maximum", true, false}, {"exclusiveMaximum", true, true}} {
		v, ok := o.get(kw.key)
		if !ok {
			continue
		}
		if _, isBool := v.(bool); isBool {
			continue // draft 4: the flag of minimum/maximum, read with them
		}
		draft4 := map[bool]string{false: "exclusiveMinimum", true: "exclusiveMaximum"}[kw.upper]
		excl := kw.exc || o.vals[draft4] == true
		f, err := strconv.ParseFloat(string(v.(json.Number)), 64)
		if err != nil {
			return lo, hi, fmt.Errorf("%s: bad %s %v", path, kw.key, v)
		}
		b := roundBound(f, excl, kw.upper, integer)
		if kw.upper {
			hi = tighter(hi, b, true)
		} else {
			lo = tighter(lo, b, false)
		}
	}
	return lo, hi, nil
}

// roundBound turns a bound into an integer bound admitting only values the
// original admits (inclusive unless it stays an exact strict bound).
func roundBound(f float64, excl, upper, integer bool) bound {
	f = math.Max(-maxBound, math.Min(maxBound, f))
	r := math.Ceil(f)
	if upper {
		r = math.Floor(f)
	}
	b := bound{v: int64(r), set: true}
	if r == f && excl {
		if integer {
			b.v += map[bool]int64{true: -1, false: 1}[upper]
		} else {
			b.excl = true
		}
	}
	return b
}

// tighter is the stricter of two bounds of the same side.
func tighter(a, b bound, upper bool) bound {
	switch {
	case !a.set:
		return b
	case a.v == b.v:
		a.excl = a.excl || b.excl
		return a
	case (b.v < a.v) == upper:
		return b
	}
	return a
}

// parseMultiple reads multipleOf: an integer k, or 10^-d (k = 0).
func parseMultiple(m any, path string) (k int64, d int, err error) {
	s := string(m.(json.Number))
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && f >= 1 && f <= 10000 {
		return int64(f), 0, nil
	}
	if frac, ok := strings.CutPrefix(s, "0."); ok && strings.Trim(frac, "0") == "1" && strings.HasSuffix(frac, "1") {
		return 0, len(frac), nil
	}
	if d, ok := strings.CutPrefix(s, "1e-"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 && n < 10 {
			return 0, n, nil
		}
	}
	return 0, 0, unsupported(path, "multipleOf %s", s)
}

// multiples is the naturals divisible by k: a residue automaton, one rule
// per residue.
func (c *schemaCompiler) multiples(k int64) *expr {
	rules := make([]int32, k)
	for r := range rules {
		rules[r] = c.g.newRule(fmt.Sprintf("mod%d_%d", k, r))
	}
	step := func(r int64) *expr {
		var alts []*expr
		if r == 0 {
			alts = append(alts, emptyExpr)
		}
		for d := int64(0); d < 10; d++ {
			alts = append(alts, seq(lit(strconv.FormatInt(d, 10)), ref(rules[(10*r+d)%k])))
		}
		return alt(alts...)
	}
	for r := range k {
		c.g.setRule(rules[r], step(r))
	}
	first := []*expr{lit("0")}
	for d := int64(1); d < 10; d++ {
		first = append(first, seq(lit(strconv.FormatInt(d, 10)), ref(rules[d%k])))
	}
	return alt(first...)
}
