package constraint

import "fmt"

// arrayType compiles type array: prefixItems (or draft 4-7 items as a
// list) for the first elements, items (or additionalItems) for the rest,
// minItems and maxItems.
func (c *schemaCompiler) arrayType(o *object, path string) (*expr, error) {
	prefix, restSchema := arrayParts(o)
	minN, maxN, err := lengthBounds(o, "minItems", "maxItems", path)
	if err != nil {
		return nil, err
	}
	items := make([]*expr, len(prefix))
	for i, p := range prefix {
		if items[i], err = c.schema(p, fmt.Sprintf("%s/prefixItems/%d", path, i)); err != nil {
			return nil, err
		}
	}
	restItem, err := c.schema(restSchema, path+"/items")
	if err != nil {
		return nil, err
	}
	sep := seq(lit(","), c.ws)
	// after(i): the elements after the first i.
	tail := func(i int) *expr {
		hi := -1
		if maxN >= 0 {
			hi = max(maxN-i, 0)
		}
		return rep(seq(sep, restItem, c.ws), max(minN-i, 0), hi)
	}
	after := tail(max(len(prefix), 1))
	for i := len(prefix) - 1; i >= 1; i-- {
		if maxN >= 0 && i >= maxN {
			after = emptyExpr
			continue
		}
		next := seq(sep, items[i], c.ws, after)
		if i >= minN {
			next = opt(next)
		}
		after = next
	}
	first := restItem
	if len(prefix) > 0 {
		first = items[0]
	}
	elems := seq(first, c.ws, after)
	switch {
	case maxN == 0:
		elems = emptyExpr
	case minN == 0:
		elems = opt(elems)
	}
	return seq(lit("["), c.ws, elems, lit("]")), nil
}

// arrayParts splits the item schemas: the positional ones, then the one
// for every later element (true when absent).
func arrayParts(o *object) (prefix []any, rest any) {
	rest = true
	if p, ok := o.vals["prefixItems"].([]any); ok {
		prefix = p
		if it, ok := o.get("items"); ok {
			rest = it
		}
		return prefix, rest
	}
	if list, ok := o.vals["items"].([]any); ok {
		if ai, ok := o.get("additionalItems"); ok {
			rest = ai
		}
		return list, rest
	}
	if it, ok := o.get("items"); ok {
		rest = it
	}
	return nil, rest
}
