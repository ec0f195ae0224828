package constraint

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// member is one named property of an object schema.
type member struct {
	key      string
	value    *expr
	required bool
}

// objectType compiles type object: the named properties, each optional
// unless required, and, when additionalProperties allows, other keys
// (never one of the named ones). See anyOrder and inOrder.
func (c *schemaCompiler) objectType(o *object, path string) (*expr, error) {
	members, named, err := c.members(o, path)
	if err != nil || members == nil && named == nil {
		return noneExpr, err
	}
	extra, err := c.additional(o, named, path)
	if err != nil {
		return nil, err
	}
	if err := checkPropertyCounts(o, members, extra, path); err != nil {
		return nil, err
	}
	sep := seq(lit(","), c.ws)
	if !c.ordered {
		return seq(lit("{"), c.ws, c.anyOrder(members, extra, sep, path), lit("}")), nil
	}
	return seq(lit("{"), c.ws, c.inOrder(members, extra, sep, path), lit("}")), nil
}

// anyOrder lets optional and additional members come anywhere, and the
// required ones in any order when there are at most maxPermutedRequired,
// else in declaration order among themselves. A key may repeat
// (every occurrence satisfies its schema, so the parsed object, whichever
// occurrence a parser keeps, does too); every required key appears.
func (c *schemaCompiler) anyOrder(members []member, extra, sep *expr, path string) *expr {
	var optional, required []*expr
	for _, m := range members {
		if m.required {
			required = append(required, m.value)
		} else {
			optional = append(optional, m.value)
		}
	}
	x := c.rule(path+"/member", alt(append(optional, extra)...))
	more := star(seq(sep, x))
	if len(required) == 0 {
		return opt(seq(x, more))
	}
	orders := [][]*expr{required}
	if len(required) <= maxPermutedRequired {
		orders = permutations(required)
	}
	chains := make([]*expr, len(orders))
	for i, order := range orders {
		tail := more
		for j := len(order) - 1; j >= 1; j-- {
			tail = seq(more, sep, order[j], tail)
		}
		chains[i] = seq(order[0], tail)
	}
	return seq(opt(seq(x, more, sep)), alt(chains...))
}

// maxPermutedRequired: up to this many required members may come in any
// order; more keep their declaration order among themselves.
const maxPermutedRequired = 3

// permutations lists every order of es.
func permutations(es []*expr) [][]*expr {
	if len(es) <= 1 {
		return [][]*expr{es}
	}
	var out [][]*expr
	for i := range es {
		rest := append(append([]*expr(nil), es[:i]...), es[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]*expr{es[i]}, p...))
		}
	}
	return out
}

// inOrder is the members in declaration order (Options.OrderedProperties),
// additional members after them.
func (c *schemaCompiler) inOrder(members []member, extra, sep *expr, path string) *expr {
	// rest[i][s] matches members i.. (s: a member was already written).
	n := len(members)
	var rest [2]*expr
	if extra.kind == eNone {
		rest = [2]*expr{emptyExpr, emptyExpr}
	} else {
		rest = [2]*expr{opt(seq(extra, star(seq(sep, extra)))), star(seq(sep, extra))}
	}
	for i := n - 1; i >= 0; i-- {
		m := members[i]
		started := c.rule(fmt.Sprintf("%s/rest%d", path, i+1), rest[1])
		take := [2]*expr{seq(m.value, started), seq(sep, m.value, started)}
		if m.required {
			rest = take
		} else {
			rest = [2]*expr{alt(take[0], rest[0]), alt(take[1], started)}
		}
	}
	return rest[0]
}

// rule wraps e in a rule (so an expr used twice is built once).
func (c *schemaCompiler) rule(name string, e *expr) *expr {
	if e.kind == eEmpty || e.kind == eNone || e.kind == eRef {
		return e
	}
	id := c.g.newRule(name)
	c.g.setRule(id, e)
	return ref(id)
}

// members lists the named properties as `"key" ws : ws value ws`. A
// required property missing from properties takes additionalProperties'
// schema. nil, nil: the object is unsatisfiable.
func (c *schemaCompiler) members(o *object, path string) ([]member, map[string]bool, error) {
	props, _ := o.vals["properties"].(*object)
	if props == nil {
		props = newObject()
	}
	required := map[string]bool{}
	req, _ := o.vals["required"].([]any)
	order := append([]string(nil), props.keys...)
	for _, r := range req {
		s, _ := r.(string)
		required[s] = true
		if !has(props, s) {
			order = append(order, s)
		}
	}
	named := map[string]bool{}
	for _, k := range c.forbidden[o] {
		if required[k] {
			return nil, nil, nil
		}
		named[k] = true
	}
	var out []member
	for _, k := range order {
		if named[k] {
			continue // forbidden by "not"
		}
		named[k] = true
		sch, ok := props.get(k)
		if !ok {
			sch, ok = o.get("additionalProperties")
			if !ok {
				sch = true
			}
		}
		v, err := c.schema(sch, path+"/properties/"+k)
		if err != nil {
			return nil, nil, err
		}
		if v.kind == eNone {
			if required[k] {
				return nil, nil, nil
			}
			continue
		}
		key := lit(`"` + canonicalString(k) + `"`)
		out = append(out, member{k, seq(key, c.ws, lit(":"), c.ws, v, c.ws), required[k]})
	}
	return out, named, nil
}

// additional is one additional member (noneExpr when none is allowed).
func (c *schemaCompiler) additional(o *object, named map[string]bool, path string) (*expr, error) {
	if pp, ok := o.vals["patternProperties"].(*object); ok && len(pp.keys) > 0 {
		return c.patternMembers(o, pp, named, path)
	}
	sch, ok := o.get("additionalProperties")
	if !ok {
		sch = true
	}
	v, err := c.schema(sch, path+"/additionalProperties")
	if err != nil || v.kind == eNone {
		return noneExpr, err
	}
	after := seq(c.ws, lit(":"), c.ws, v, c.ws)
	if len(named) == 0 {
		return seq(anyJSONString(), after), nil
	}
	return c.rule(path+"/additionalKey", seq(lit(`"`), keyNotIn(named, c.keyContinuations(v, after, path)))), nil
}

// keyConts are an additional key's continuations after the trie of
// names: end (the closing quote, then the member's rest), tail (more key
// text, then end) and wide (a non-ASCII character, then tail).
type keyConts struct{ end, tail, wide *expr }

// keyContinuations returns an additional key's continuations. They are
// rules called in tail position, so every way of leaving the trie of
// names reaches the same parse stack. Every node without a non-ASCII name
// character leaves by wide on such a character, and tail (an ASCII
// character then tail, or wide, or end) does too, so inside a multi-byte
// character the set after any key prefix is the one after key text that
// left the names: walk takes those subtrees from the text loop's mask
// (see loopLead). Objects
// whose additional members have one same value rule share them, so the
// key text's masks (a text loop's, see loopMask) serve all those objects.
func (c *schemaCompiler) keyContinuations(v, after *expr, path string) keyConts {
	if ids, ok := c.keyRules[v.rule]; ok && v.kind == eRef {
		return keyConts{ref(ids[0]), ref(ids[1]), ref(ids[2])}
	}
	end := c.rule(path+"/additionalKeyEnd", seq(lit(`"`), after))
	tailID := c.g.newRule(path + "/additionalKeyTail")
	tail := ref(tailID)
	wide := c.rule(path+"/additionalKeyWide", seq(jsonChars([]runeRange{{0x80, utf8.MaxRune}}), tail))
	c.g.setRule(tailID, alt(end, seq(jsonChars([]runeRange{{0, 0x7F}}), tail), wide))
	if v.kind == eRef && end.kind == eRef && tail.kind == eRef && wide.kind == eRef {
		c.keyRules[v.rule] = [3]int32{end.rule, tail.rule, wide.rule}
	}
	return keyConts{end, tail, wide}
}

// patternMembers is one member whose key matches a patternProperties
// pattern. Supported: additionalProperties false, every pattern with the
// same schema, and no named (or forbidden) key matching a pattern, so a
// key's schema is exactly the patterns' one.
func (c *schemaCompiler) patternMembers(o *object, pp *object, named map[string]bool, path string) (*expr, error) {
	if ap, ok := o.get("additionalProperties"); !ok || ap != false {
		return nil, unsupported(path, "patternProperties without additionalProperties false")
	}
	var keys []*expr
	for _, p := range pp.keys {
		if jsonText(pp.vals[p]) != jsonText(pp.vals[pp.keys[0]]) {
			return nil, unsupported(path, "patternProperties with different schemas")
		}
		e, _, _, err := jsonPattern(p)
		if err != nil {
			return nil, unsupported(path, "patternProperties: %v", err)
		}
		re, err := ecmaRegexp(p)
		if err != nil {
			return nil, unsupported(path, "patternProperties: %v", err)
		}
		for k := range named {
			if re.MatchString(k) {
				return nil, unsupported(path, "patternProperties pattern %q matching property %q", p, k)
			}
		}
		keys = append(keys, e)
	}
	v, err := c.schema(pp.vals[pp.keys[0]], path+"/patternProperties")
	if err != nil || v.kind == eNone {
		return noneExpr, err
	}
	return seq(lit(`"`), alt(keys...), lit(`"`), c.ws, lit(":"), c.ws, v, c.ws), nil
}

// checkPropertyCounts accepts minProperties/maxProperties only when the
// grammar already implies them.
func checkPropertyCounts(o *object, members []member, extra *expr, path string) error {
	if v, ok := o.get("minProperties"); ok {
		n, err := count(v, path, "minProperties")
		req := 0
		for _, m := range members {
			if m.required {
				req++
			}
		}
		if err != nil || n > req {
			return unsupported(path, "minProperties above the required count")
		}
	}
	if v, ok := o.get("maxProperties"); ok {
		n, err := count(v, path, "maxProperties")
		if err != nil || extra.kind != eNone || n < len(members) {
			return unsupported(path, "maxProperties below the possible property count")
		}
	}
	return nil
}

// runeTrie is a trie of the named keys, by character.
type runeTrie struct {
	end  bool
	kids map[rune]*runeTrie
}

// keyNotIn is every JSON string body (canonical form) whose value is not
// one of names, followed by k.end (after the body) or k.tail (after a
// character that leaves the trie of names): it leaves the trie of names at
// some character or stops at a node where no name ends.
func keyNotIn(names map[string]bool, k keyConts) *expr {
	root := &runeTrie{kids: map[rune]*runeTrie{}}
	for name := range names {
		n := root
		for _, r := range name {
			if n.kids[r] == nil {
				n.kids[r] = &runeTrie{kids: map[rune]*runeTrie{}}
			}
			n = n.kids[r]
		}
		n.end = true
	}
	return root.notIn(k)
}

// notIn is keyNotIn from trie node n. The characters leaving the trie
// continue with k.tail; when no name continues with a non-ASCII
// character here, those characters are taken by the shared rule k.wide.
func (n *runeTrie) notIn(k keyConts) *expr {
	keys := make([]rune, 0, len(n.kids))
	for r := range n.kids {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var others []runeRange
	next := rune(0)
	for _, r := range keys {
		if r > next {
			others = append(others, runeRange{next, r - 1})
		}
		next = r + 1
	}
	others = append(others, runeRange{next, utf8.MaxRune})
	var alts []*expr
	if last := others[len(others)-1]; last.lo <= 0x80 {
		others[len(others)-1].hi = 0x7F // last.hi is utf8.MaxRune
		if last.lo == 0x80 {
			others = others[:len(others)-1]
		}
		alts = append(alts, k.wide)
	}
	if len(others) > 0 {
		alts = append(alts, seq(jsonChars(others), k.tail))
	}
	if !n.end {
		alts = append(alts, k.end)
	}
	for _, r := range keys {
		alts = append(alts, seq(jsonChars([]runeRange{{r, r}}), n.kids[r].notIn(k)))
	}
	return alt(alts...)
}
