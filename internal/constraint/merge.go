package constraint

import (
	"encoding/json"
	"strconv"
	"strings"
)

// maxResolveDepth bounds $ref/allOf chains that never reach a schema body.
const maxResolveDepth = 64

// resolve returns a schema equivalent to o with no $ref and no allOf at its
// top: the $ref target and the allOf members merged into o's other
// keywords (see merge). A $ref with only annotations beside it is its
// target.
func (c *schemaCompiler) resolve(o *object, path string) (any, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxResolveDepth {
		return nil, unsupported(path, "$ref/allOf cycle without a schema body")
	}
	var parts []any
	base := o
	if r, ok := o.get("$ref"); ok {
		s, _ := r.(string)
		target, err := c.lookupRef(s, path)
		if err != nil {
			return nil, err
		}
		base = o.clone()
		base.del("$ref")
		if !hasAssertions(base) || c.refOverrides {
			return target, nil // drafts 3-7 ignore the keywords beside $ref
		}
		parts = append(parts, target)
	}
	if all, ok := base.get("allOf"); ok {
		base = base.clone()
		base.del("allOf")
		list, _ := all.([]any)
		parts = append(parts, list...)
	}
	acc := base
	for _, p := range parts {
		sub, err := c.flatten(p, path)
		if err != nil {
			return nil, err
		}
		if sub == nil {
			continue
		}
		if acc, err = merge(acc, sub, path); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// flatten resolves one allOf member to an object with no $ref or allOf
// (nil for true; an unsatisfiable object for false).
func (c *schemaCompiler) flatten(s any, path string) (*object, error) {
	switch s := s.(type) {
	case bool:
		if s {
			return nil, nil
		}
		o := newObject()
		o.set("type", []any{})
		return o, nil
	case *object:
		if !has(s, "$ref") && !has(s, "allOf") {
			return s, checkKeywords(s, path)
		}
		r, err := c.resolve(s, path)
		if err != nil {
			return nil, err
		}
		return c.flatten(r, path)
	}
	return nil, unsupported(path, "allOf member of type %T", s)
}

// merge is the conjunction of two schemas as one schema object, for the
// keywords where that is exact; any other overlap is an UnsupportedError.
func merge(a, b *object, path string) (*object, error) {
	if err := checkClosedMerge(a, b, path); err != nil {
		return nil, err
	}
	r := a.clone()
	for _, k := range b.keys {
		bv := b.vals[k]
		av, ok := r.get(k)
		if !ok || !assertions[k] {
			if !ok {
				r.set(k, bv)
			}
			continue
		}
		v, err := mergeKeyword(k, av, bv, path)
		if err != nil {
			return nil, err
		}
		r.set(k, v)
	}
	return r, nil
}

// checkClosedMerge refuses merging an object schema that forbids or
// constrains additional properties with one naming other properties (the
// merged additionalProperties would be wrong for them).
func checkClosedMerge(a, b *object, path string) error {
	for _, p := range [][2]*object{{a, b}, {b, a}} {
		ap, ok := p[0].get("additionalProperties")
		if !ok || ap == true {
			continue
		}
		mine, _ := p[0].vals["properties"].(*object)
		other, _ := p[1].vals["properties"].(*object)
		if other == nil {
			continue
		}
		for _, k := range other.keys {
			if mine == nil || !has(mine, k) {
				return unsupported(path, "allOf with additionalProperties and differing properties")
			}
		}
	}
	return nil
}

func mergeKeyword(k string, av, bv any, path string) (any, error) {
	switch k {
	case "type":
		return mergeTypes(av, bv), nil
	case "properties":
		return mergeProperties(av, bv), nil
	case "required":
		return union(av, bv), nil
	case "minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum",
		"maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum":
		_, aok := av.(json.Number)
		_, bok := bv.(json.Number)
		if aok && bok {
			return pickNumber(av, bv, strings.HasPrefix(k, "min") || k == "exclusiveMinimum"), nil
		}
	case "enum":
		return intersect(av, bv), nil
	}
	if jsonText(av) == jsonText(bv) {
		return av, nil
	}
	return nil, unsupported(path, "allOf merging two different %q", k)
}

func typeList(v any) []any {
	if s, ok := v.(string); ok {
		return []any{s}
	}
	l, _ := v.([]any)
	return l
}

// mergeTypes intersects two type keywords (integer within number).
func mergeTypes(a, b any) any {
	out := []any{}
	bl := typeList(b)
	for _, t := range typeList(a) {
		for _, u := range bl {
			switch {
			case t == u:
				out = append(out, t)
			case t == "integer" && u == "number" || t == "number" && u == "integer":
				out = append(out, "integer")
			}
		}
	}
	return out
}

func mergeProperties(a, b any) any {
	ao, _ := a.(*object)
	bo, _ := b.(*object)
	r := ao.clone()
	for _, k := range bo.keys {
		if av, ok := r.get(k); ok {
			both := newObject()
			both.set("allOf", []any{av, bo.vals[k]})
			r.set(k, both)
		} else {
			r.set(k, bo.vals[k])
		}
	}
	return r
}

func union(a, b any) any {
	al, _ := a.([]any)
	out := append([]any(nil), al...)
	seen := map[string]bool{}
	for _, v := range al {
		seen[jsonText(v)] = true
	}
	bl, _ := b.([]any)
	for _, v := range bl {
		if !seen[jsonText(v)] {
			out = append(out, v)
		}
	}
	return out
}

func intersect(a, b any) any {
	bl, _ := b.([]any)
	in := map[string]bool{}
	for _, v := range bl {
		in[jsonText(v)] = true
	}
	out := []any{}
	al, _ := a.([]any)
	for _, v := range al {
		if in[jsonText(v)] {
			out = append(out, v)
		}
	}
	return out
}

// pickNumber is the larger (larger=true) or smaller of two numbers.
func pickNumber(a, b any, larger bool) any {
	x, _ := strconv.ParseFloat(string(a.(json.Number)), 64)
	y, _ := strconv.ParseFloat(string(b.(json.Number)), 64)
	if (y > x) == larger && y != x {
		return b
	}
	return a
}
