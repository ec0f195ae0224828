package constraint

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// UnsupportedError names a schema feature the constraint cannot enforce
// exactly (the API answers 400 with it). Compiling never drops such a
// feature silently.
type UnsupportedError struct {
	Feature string // e.g. "patternProperties", "format: ipv6"
	Path    string // JSON pointer of the subschema ("" when unknown)
}

func (e *UnsupportedError) Error() string {
	if e.Path == "" {
		return "unsupported JSON Schema feature: " + e.Feature
	}
	return fmt.Sprintf("unsupported JSON Schema feature: %s (at %s)", e.Feature, e.Path)
}

func unsupported(path, feature string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(feature, args...), Path: path}
}

// ErrInvalidSchema wraps the validator library's complaint about a schema
// that is not valid JSON Schema.
var ErrInvalidSchema = errors.New("invalid JSON Schema")

// schemaCompiler turns a parsed schema into grammar rules: one rule per
// subschema object (so $ref recursion is a rule reference).
type schemaCompiler struct {
	*jsonGrammar
	root      any
	rules     map[*object]int32
	canon     map[string]*object   // the first subschema of each JSON text (see canonical)
	keyRules  map[int32][3]int32   // additional keys' end, tail and wide rules by value rule (see keyContinuations)
	forbidden map[*object][]string // properties a "not required" excludes
	ordered   bool                 // Options.OrderedProperties
	// refOverrides: the schema's draft (3 to 7) ignores keywords beside $ref.
	refOverrides bool
	empty        map[*object]bool // subschemas no value satisfies
	depth        int              // $ref/allOf resolution depth (cycles)
}

// JSONSchema compiles a JSON Schema (draft 4 to 2020-12). The schema is first
// checked with a JSON Schema validator library (an invalid schema is an
// error); a feature that cannot be enforced is an *UnsupportedError.
func JSONSchema(schema []byte, o Options) (*Constraint, error) {
	if err := checkSchema(schema); err != nil {
		return nil, fmt.Errorf("constraint: %w: %w", ErrInvalidSchema, err)
	}
	root, err := parseJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("constraint: JSON Schema: %w", err)
	}
	c := &schemaCompiler{jsonGrammar: newJSONGrammar(o), root: root, rules: map[*object]int32{}, canon: map[string]*object{}, keyRules: map[int32][3]int32{}, empty: map[*object]bool{},
		forbidden: map[*object][]string{}, ordered: o.OrderedProperties}
	if ro, ok := root.(*object); ok {
		d, _ := ro.vals["$schema"].(string)
		c.refOverrides = strings.Contains(d, "draft-0")
	}
	e, err := c.schema(root, "#")
	if err != nil {
		return nil, fmt.Errorf("constraint: JSON Schema: %w", err)
	}
	return c.finish(e, "json_schema")
}

// schema is the expr of the values satisfying s (a subschema at path).
func (c *schemaCompiler) schema(s any, path string) (*expr, error) {
	switch s := s.(type) {
	case bool:
		if s {
			return c.value(), nil
		}
		return noneExpr, nil
	case *object:
		s = c.canonical(s)
		if c.empty[s] {
			return noneExpr, nil
		}
		if id, ok := c.rules[s]; ok {
			return ref(id), nil
		}
		id := c.g.newRule(path)
		c.rules[s] = id
		body, err := c.object(s, path)
		if err != nil {
			return nil, err
		}
		c.g.setRule(id, body)
		if body.kind == eNone {
			c.empty[s] = true
			return noneExpr, nil
		}
		return ref(id), nil
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %T", path, s)
}

// canonical returns the first subschema met with o's JSON text (o when it
// is the first), so equal subschemas compile to one rule: the stacks inside
// it are then the same wherever it is used, and masks abstracted from
// their context (context.go) serve every use. A subschema a "not required"
// restricts is its own.
func (c *schemaCompiler) canonical(o *object) *object {
	if len(c.forbidden[o]) > 0 {
		return o
	}
	k := jsonText(o)
	if first, ok := c.canon[k]; ok {
		return first
	}
	c.canon[k] = o
	return o
}

// object compiles one schema object.
func (c *schemaCompiler) object(o *object, path string) (*expr, error) {
	if err := checkKeywords(o, path); err != nil {
		return nil, err
	}
	if _, ok := o.get("$ref"); ok || has(o, "allOf") {
		merged, err := c.resolve(o, path)
		if err != nil {
			return nil, err
		}
		return c.schema(merged, path)
	}
	if has(o, "anyOf") || has(o, "oneOf") {
		return c.union(o, path)
	}
	o, empty, err := c.applyNot(o, path)
	if err != nil || empty {
		return noneExpr, err
	}
	if has(o, "enum") || has(o, "const") {
		return c.enum(o, path)
	}
	return c.types(o, path)
}

// types is the union, over the types o allows, of each type's grammar.
func (c *schemaCompiler) types(o *object, path string) (*expr, error) {
	ts, err := typeSet(o, path)
	if err != nil {
		return nil, err
	}
	var alts []*expr
	for _, t := range ts {
		var e *expr
		switch t {
		case "null":
			e = lit("null")
		case "boolean":
			e = alt(lit("true"), lit("false"))
		case "integer", "number":
			e, err = c.numberType(o, path, t == "integer")
		case "string":
			e, err = stringType(o, path)
		case "object":
			e, err = c.objectType(o, path)
		case "array":
			e, err = c.arrayType(o, path)
		}
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	return alt(alts...), nil
}

var allTypes = []string{"null", "boolean", "object", "array", "string", "number"}

// typeSet lists the types o allows ("number" covers "integer").
func typeSet(o *object, path string) ([]string, error) {
	v, ok := o.get("type")
	if !ok {
		return allTypes, nil
	}
	var names []any
	switch v := v.(type) {
	case string:
		names = []any{v}
	case []any:
		names = v
	default:
		return nil, fmt.Errorf("%s: bad type %v", path, v)
	}
	set := map[string]bool{}
	for _, n := range names {
		s, _ := n.(string)
		if !strings.Contains(" null boolean object array string number integer ", " "+s+" ") {
			return nil, fmt.Errorf("%s: unknown type %q", path, s)
		}
		set[s] = true
	}
	var out []string
	for _, t := range append(allTypes, "integer") {
		if set[t] && !(t == "integer" && set["number"]) {
			out = append(out, t)
		}
	}
	return out, nil
}

func has(o *object, k string) bool {
	_, ok := o.get(k)
	return ok
}

// lookupRef resolves a local $ref ("#", "#/json/pointer").
func (c *schemaCompiler) lookupRef(r, path string) (any, error) {
	frag, ok := strings.CutPrefix(r, "#")
	if !ok {
		return nil, unsupported(path, "$ref to another document (%q)", r)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("%s: bad $ref %q", path, r)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, unsupported(path, "$ref to an anchor (%q)", r)
	}
	cur := c.root
	for _, tok := range strings.Split(frag, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case *object:
			cur, ok = v.get(tok)
		case []any:
			i, err := strconv.Atoi(tok)
			ok = err == nil && i >= 0 && i < len(v)
			if ok {
				cur = v[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("%s: $ref %q does not resolve", path, r)
		}
	}
	return cur, nil
}
