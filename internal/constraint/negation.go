package constraint

// applyNot rewrites the supported forms of "not" into equivalent keywords:
// not {} (nothing is valid), not {type: ...} (the other types), and
// not {required: [k]} (property k never appears). Any other "not" is an
// UnsupportedError. empty is true when no value satisfies o.
func (c *schemaCompiler) applyNot(o *object, path string) (out *object, empty bool, err error) {
	n, ok := o.get("not")
	if !ok {
		return o, false, nil
	}
	neg, isObj := n.(*object)
	if n == true || isObj && !hasAssertions(neg) {
		return nil, true, nil
	}
	if n == false {
		out = o.clone()
		out.del("not")
		return out, false, nil
	}
	out = o.clone()
	out.del("not")
	switch {
	case isObj && has(neg, "type") && !hasAssertions(neg, "type"):
		ts, err := typeSet(o, path)
		if err != nil {
			return nil, false, err
		}
		excl, err := typeSet(neg, path)
		if err != nil {
			return nil, false, err
		}
		var keep []any
		for _, t := range ts {
			switch {
			case contains(excl, t):
			case t == "number" && contains(excl, "integer"):
				return nil, false, unsupported(path, "not {type: integer} on numbers")
			default:
				keep = append(keep, t)
			}
		}
		out.set("type", append([]any{}, keep...))
		return out, len(keep) == 0, nil
	case isObj && has(neg, "required") && !hasAssertions(neg, "required"):
		req, _ := neg.vals["required"].([]any)
		k, isStr := any(nil), false
		if len(req) == 1 {
			k = req[0]
			_, isStr = k.(string)
		}
		if !isStr {
			return nil, false, unsupported(path, "not {required: [several]}")
		}
		c.forbidden[out] = append(append([]string(nil), c.forbidden[o]...), k.(string))
		return out, false, nil
	}
	return nil, false, unsupported(path, "not")
}
