package constraint

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxRepeat caps minLength/maxLength/minItems/maxItems unrolled into the
// grammar; a larger maxLength is clamped (stricter, never looser).
const maxRepeat = 2048

// stringType compiles type string with minLength, maxLength, pattern and
// format. Format and pattern together are refused; length bounds beside
// either are accepted only when they follow from it (e.g. ^[0-9]{5}$ with
// maxLength 5), else refused.
func stringType(o *object, path string) (*expr, error) {
	minL, maxL, err := lengthBounds(o, "minLength", "maxLength", path)
	if err != nil {
		return nil, err
	}
	lengths := minL > 0 || maxL >= 0
	var body *expr
	if f, ok := o.get("format"); ok {
		name, _ := f.(string)
		e, lo, hi, known, err := formatExpr(name)
		if err != nil {
			return nil, withPath(err, path)
		}
		if known {
			if has(o, "pattern") || !lengthsImplied(lo, hi, minL, maxL) {
				return nil, unsupported(path, "format %s with pattern or length bounds", name)
			}
			body = e
		}
	}
	if p, ok := o.get("pattern"); ok {
		s, _ := p.(string)
		e, lo, hi, err := jsonPattern(s)
		if err != nil {
			return nil, unsupported(path, "%v", err)
		}
		if !lengthsImplied(lo, hi, minL, maxL) {
			return nil, unsupported(path, "pattern with minLength/maxLength")
		}
		body = e
	}
	switch {
	case body != nil:
	case lengths:
		body = rep(jsonChars([]runeRange{{0, utf8.MaxRune}}), minL, maxL)
	default:
		return anyJSONString(), nil
	}
	return seq(lit(`"`), body, lit(`"`)), nil
}

// lengthBounds reads a min/max pair of counts (max -1 when absent).
func lengthBounds(o *object, minKey, maxKey, path string) (lo, hi int, err error) {
	lo, hi = 0, -1
	if v, ok := o.get(minKey); ok {
		if lo, err = count(v, path, minKey); err != nil {
			return
		}
		if lo > maxRepeat {
			return 0, 0, unsupported(path, "%s above %d", minKey, maxRepeat)
		}
	}
	if v, ok := o.get(maxKey); ok {
		if hi, err = count(v, path, maxKey); err != nil {
			return
		}
		hi = min(hi, max(lo, maxRepeat))
	}
	return lo, hi, nil
}

func count(v any, path, key string) (int, error) {
	n, _ := v.(json.Number)
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < 0 {
		return 0, unsupported(path, "%s %v", key, v)
	}
	return int(min(f, 1<<30)), nil
}

// withPath sets the path of an UnsupportedError.
func withPath(err error, path string) error {
	if u, ok := err.(*UnsupportedError); ok && u.Path == "" {
		u.Path = path
	}
	return err
}
