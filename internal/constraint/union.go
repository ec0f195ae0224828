package constraint

import (
	"encoding/json"
	"fmt"
	"strings"
)

// union compiles anyOf/oneOf: each branch merged with the keywords beside
// it, as alternatives. oneOf is compiled as anyOf only when its branches
// are provably disjoint (no value matches two), else it is refused.
func (c *schemaCompiler) union(o *object, path string) (*expr, error) {
	key := "anyOf"
	if !has(o, key) {
		key = "oneOf"
	}
	list, _ := o.vals[key].([]any)
	rest := o.clone()
	rest.del(key)
	var branches []any
	for i, b := range list {
		bpath := fmt.Sprintf("%s/%s/%d", path, key, i)
		if !hasAssertions(rest) {
			branches = append(branches, b)
			continue
		}
		flat, err := c.flatten(b, bpath)
		if err != nil {
			return nil, err
		}
		if flat == nil {
			branches = append(branches, rest)
			continue
		}
		m, err := merge(rest, flat, bpath)
		if err != nil {
			return nil, err
		}
		branches = append(branches, m)
	}
	if key == "oneOf" {
		if err := c.checkDisjoint(branches, path); err != nil {
			return nil, err
		}
	}
	alts := make([]*expr, len(branches))
	for i, b := range branches {
		e, err := c.schema(b, fmt.Sprintf("%s/%s/%d", path, key, i))
		if err != nil {
			return nil, err
		}
		alts[i] = e
	}
	return alt(alts...), nil
}

// branchInfo is what disjointness is decided on.
type branchInfo struct {
	types    map[string]bool            // nil: any type
	values   map[string]bool            // enum/const values (nil: unrestricted)
	consts   map[string]map[string]bool // required property -> its allowed values
	required map[string]bool
	closed   map[string]bool // additionalProperties false: the named properties (nil: open)
}

func (c *schemaCompiler) checkDisjoint(branches []any, path string) error {
	infos := make([]branchInfo, len(branches))
	for i, b := range branches {
		o, ok := b.(*object)
		if !ok {
			return unsupported(path, "oneOf with a boolean branch")
		}
		flat, err := c.flatten(o, path)
		if err != nil {
			return err
		}
		infos[i] = c.info(flat)
	}
	for i := range infos {
		for j := i + 1; j < len(infos); j++ {
			if !infos[i].disjoint(&infos[j]) {
				return unsupported(path, "oneOf whose branches %d and %d may overlap", i, j)
			}
		}
	}
	return nil
}

func (c *schemaCompiler) info(o *object) branchInfo {
	var in branchInfo
	if t, ok := o.get("type"); ok {
		in.types = map[string]bool{}
		for _, n := range typeList(t) {
			s, _ := n.(string)
			in.types[s] = true
		}
	}
	in.values = valueSet(o)
	in.required = map[string]bool{}
	req, _ := o.vals["required"].([]any)
	for _, r := range req {
		s, _ := r.(string)
		in.required[s] = true
	}
	props, _ := o.vals["properties"].(*object)
	in.consts = map[string]map[string]bool{}
	if props != nil {
		for _, k := range props.keys {
			p, _ := props.vals[k].(*object)
			if p != nil && in.required[k] {
				if flat, err := c.flatten(p, ""); err == nil && flat != nil {
					if vs := valueSet(flat); vs != nil {
						in.consts[k] = vs
					}
				}
			}
		}
	}
	pp, _ := o.vals["patternProperties"].(*object)
	if ap, ok := o.get("additionalProperties"); ok && ap == false && (pp == nil || len(pp.keys) == 0) {
		in.closed = map[string]bool{}
		if props != nil {
			for _, k := range props.keys {
				in.closed[k] = true
			}
		}
	}
	return in
}

// valueSet is the set of enum/const values of o (nil: unrestricted).
func valueSet(o *object) map[string]bool {
	var vals []any
	if v, ok := o.get("const"); ok {
		vals = []any{v}
	} else if v, ok := o.get("enum"); ok {
		vals, _ = v.([]any)
	} else {
		return nil
	}
	set := map[string]bool{}
	for _, v := range vals {
		set[jsonText(v)] = true
	}
	return set
}

func (a *branchInfo) disjoint(b *branchInfo) bool {
	if a.types != nil && b.types != nil && !typesOverlap(a.types, b.types) {
		return true
	}
	if a.values != nil && b.values != nil && !setsOverlap(a.values, b.values) {
		return true
	}
	for k, av := range a.consts {
		if bv, ok := b.consts[k]; ok && !setsOverlap(av, bv) {
			return true
		}
	}
	for _, p := range [][2]*branchInfo{{a, b}, {b, a}} {
		for k := range p[0].required {
			if p[1].closed != nil && !p[1].closed[k] {
				return true
			}
		}
	}
	return false
}

func typesOverlap(a, b map[string]bool) bool {
	for t := range a {
		if b[t] || t == "integer" && b["number"] || t == "number" && b["integer"] {
			return true
		}
	}
	return false
}

func setsOverlap(a, b map[string]bool) bool {
	for v := range a {
		if b[v] {
			return true
		}
	}
	return false
}

// enum compiles enum/const: the listed values (in canonical compact form)
// that the type keyword allows. Other assertions beside them are refused.
func (c *schemaCompiler) enum(o *object, path string) (*expr, error) {
	if hasAssertions(o, "enum", "const", "type") {
		return nil, unsupported(path, "enum/const with other assertions beside type")
	}
	var vals []any
	if v, ok := o.get("const"); ok {
		vals = []any{v}
		if e, ok := o.get("enum"); ok {
			vals, _ = intersect(e, vals).([]any)
		}
	} else {
		vals, _ = o.vals["enum"].([]any)
	}
	ts, err := typeSet(o, path)
	if err != nil {
		return nil, err
	}
	var alts []*expr
	for _, v := range vals {
		if typeAllows(ts, v) {
			alts = append(alts, lit(jsonText(v)))
		}
	}
	return alt(alts...), nil
}

// typeAllows reports whether value v has one of the types ts.
func typeAllows(ts []string, v any) bool {
	var t string
	switch v := v.(type) {
	case nil:
		t = "null"
	case bool:
		t = "boolean"
	case string:
		t = "string"
	case []any:
		t = "array"
	case *object:
		t = "object"
	case json.Number:
		if contains(ts, "number") {
			return true
		}
		return contains(ts, "integer") && !strings.ContainsAny(string(v), ".eE")
	}
	return contains(ts, t)
}
