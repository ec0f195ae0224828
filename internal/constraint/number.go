package constraint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// bound is a bound on a number: v + 0.frac (v the floor, frac the decimal
// digits of the fraction without trailing zeros; set: present; excl:
// strict).
type bound struct {
	v         int64
	frac      string
	set, excl bool
}

// neg is the bound of -x.
func (b bound) neg() bound {
	if b.frac == "" {
		return bound{v: -b.v, set: b.set, excl: b.excl}
	}
	c := []byte(b.frac) // 1 - 0.frac, digit by digit
	for i := range c {
		c[i] = '9' - c[i] + '0'
	}
	c[len(c)-1]++
	return bound{v: -b.v - 1, frac: string(c), set: b.set, excl: b.excl}
}

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
	pos, err := side(lo, hi, fr)
	if err != nil {
		return nil, unsupported(path, "minimum/maximum: %v", err)
	}
	neg, err := side(hi.neg(), lo.neg(), fr)
	if err != nil {
		return nil, unsupported(path, "minimum/maximum: %v", err)
	}
	return alt(pos, seq(lit("-"), neg)), nil
}

// side is the numbers x >= 0, written without a sign, with lo <= x <= hi
// (strict where excl). A number is its integer part n and fraction F.
func side(lo, hi bound, fr fracs) (*expr, error) {
	if hi.set && hi.v < 0 {
		return noneExpr, nil
	}
	if !lo.set || lo.v < 0 {
		lo = bound{set: true} // x >= 0 holds already
	}
	if (lo.frac != "" || hi.frac != "") && fr.any != numFracs.any {
		return nil, errFracBound
	}
	lowFrac, lowAll := fracAtLeast(lo, fr)
	var parts []*expr
	start := lo.v
	if !lowAll {
		start = lo.v + 1
	}
	if hi.set && hi.v == lo.v {
		highFrac, _ := fracAtMost(hi, fr)
		switch {
		case lowAll:
			return seq(lit(strconv.FormatInt(lo.v, 10)), highFrac), nil
		case hi.frac == "":
			return noneExpr, nil // x <= n wants no fraction, x > n one
		}
		return nil, errFracBound
	}
	if !lowAll && (!hi.set || lo.v < hi.v) {
		parts = append(parts, seq(lit(strconv.FormatInt(lo.v, 10)), lowFrac))
	}
	if !hi.set {
		return alt(append(parts, seq(natRange(start, -1), fr.any))...), nil
	}
	if start <= hi.v-1 {
		parts = append(parts, seq(natRange(start, hi.v-1), fr.any))
	}
	if hi.v >= start {
		highFrac, _ := fracAtMost(hi, fr)
		parts = append(parts, seq(lit(strconv.FormatInt(hi.v, 10)), highFrac))
	}
	return alt(parts...), nil
}

var errFracBound = errors.New("a fractional minimum and maximum with the same integer part")

// fracAtLeast is the fractions F (with the dot, or none) for which
// lo.v + 0.F satisfies lo; all is true when every fraction does.
func fracAtLeast(lo bound, fr fracs) (e *expr, all bool) {
	switch {
	case lo.frac == "" && !lo.excl:
		return fr.any, true
	case lo.frac == "":
		return fr.nonzero, false
	}
	return seq(lit("."), digitsAtLeast(lo.frac, lo.excl)), false
}

// fracAtMost is the fractions F for which hi.v + 0.F satisfies hi.
func fracAtMost(hi bound, fr fracs) (e *expr, all bool) {
	switch {
	case hi.frac == "" && !hi.excl:
		return fr.zero, false
	case hi.frac == "":
		return noneExpr, false
	}
	return alt(emptyExpr, seq(lit("."), digitsAtMost(hi.frac, hi.excl))), false
}

// digitsAtLeast is the digit strings F (at least one digit) with 0.F >= 0.d
// (> when strict); d has no trailing zero.
func digitsAtLeast(d string, strict bool) *expr {
	var alts []*expr
	for i := range len(d) {
		if d[i] < '9' {
			alts = append(alts, seq(lit(d[:i]), byteIn(byteRange{d[i] + 1, '9'}), star(digit)))
		}
	}
	if strict {
		return alt(append(alts, seq(lit(d), star(lit("0")), digit19, star(digit)))...)
	}
	return alt(append(alts, seq(lit(d), star(digit)))...)
}

// digitsAtMost is the digit strings F with 0.F <= 0.d (< when strict).
func digitsAtMost(d string, strict bool) *expr {
	var alts []*expr
	for i := range len(d) {
		if d[i] > '0' {
			alts = append(alts, seq(lit(d[:i]), byteIn(byteRange{'0', d[i] - 1}), star(digit)))
		}
		if i > 0 {
			alts = append(alts, seq(lit(d[:i]), star(lit("0"))))
		}
	}
	if !strict {
		alts = append(alts, seq(lit(d), star(lit("0"))))
	}
	return alt(alts...)
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
		if db, ok := decimalBound(string(v.(json.Number)), excl); ok && !integer {
			b = db
		}
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

// decimalBound reads an exact decimal bound within ±maxBound; ok is false
// beyond (roundBound clamps it).
func decimalBound(s string, excl bool) (bound, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return bound{}, false
	}
	fl := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: the floor for a positive denominator
	if !fl.IsInt64() || fl.Int64() > maxBound || fl.Int64() < -maxBound {
		return bound{}, false
	}
	frac := new(big.Rat).Sub(r, new(big.Rat).SetInt(fl))
	digits := strings.TrimRight(strings.TrimPrefix(frac.FloatString(40), "0."), "0")
	if back, _ := new(big.Rat).SetString("0." + digits + "0"); back.Cmp(frac) != 0 {
		return bound{}, false
	}
	if digits == "0" {
		digits = ""
	}
	return bound{v: fl.Int64(), frac: digits, set: true, excl: excl}, true
}

// tighter is the stricter of two bounds of the same side.
func tighter(a, b bound, upper bool) bound {
	if !a.set {
		return b
	}
	c := a.v - b.v
	if c == 0 {
		c = int64(strings.Compare(padRight(a.frac, b.frac), padRight(b.frac, a.frac)))
	}
	switch {
	case c == 0:
		a.excl = a.excl || b.excl
		return a
	case (c > 0) == upper:
		return b
	}
	return a
}

// padRight pads a with zeros to the length of b.
func padRight(a, b string) string {
	if len(a) >= len(b) {
		return a
	}
	return a + strings.Repeat("0", len(b)-len(a))
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
