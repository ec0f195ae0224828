package constraint

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// assertions are the keywords that constrain values; the others (title,
// description, default, $defs, unknown keywords...) are annotations, which
// validators ignore and so does the constraint.
var assertions = map[string]bool{
	"type": true, "enum": true, "const": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "prefixItems": true, "additionalItems": true,
	"minItems": true, "maxItems": true, "minLength": true, "maxLength": true, "pattern": true,
	"format": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "allOf": true, "anyOf": true, "oneOf": true,
	"$ref": true, "uniqueItems": true, "minProperties": true, "maxProperties": true,
	"not": true, "if": true, "patternProperties": true, "propertyNames": true,
	"dependencies": true, "dependentRequired": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "contains": true,
	"minContains": true, "maxContains": true, "$dynamicRef": true, "$recursiveRef": true,
}

// unsupportedKeywords cannot be enforced by a grammar here; a schema using
// them is refused.
var unsupportedKeywords = []string{
	"propertyNames", "dependencies", "dependentRequired",
	"dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains", "minContains",
	"maxContains", "$dynamicRef", "$recursiveRef",
}

// checkKeywords refuses the keywords of o that cannot be enforced.
func checkKeywords(o *object, path string) error {
	for _, k := range unsupportedKeywords {
		if has(o, k) {
			return unsupported(path, "%s", k)
		}
	}
	if u, ok := o.get("uniqueItems"); ok && u != false {
		return unsupported(path, "uniqueItems")
	}
	if has(o, "if") && (has(o, "then") || has(o, "else")) {
		return unsupported(path, "if/then/else")
	}
	if id, ok := o.get("$id"); ok && path != "#" {
		if s, _ := id.(string); !strings.HasPrefix(s, "#") {
			return unsupported(path, "$id in a subschema")
		}
	}
	return nil
}

// hasAssertions reports whether o constrains values beyond except.
func hasAssertions(o *object, except ...string) bool {
	for _, k := range o.keys {
		if assertions[k] && !contains(except, k) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkSchema validates the schema document with a maintained JSON Schema
// library (github.com/santhosh-tekuri/jsonschema): metaschema, $refs and
// regexes.
func checkSchema(schema []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return &json.UnsupportedValueError{Str: "schema is not an object or a boolean"}
		}
	}
	c := jsonschema.NewCompiler()
	const loc = "urn:govllm:schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return err
	}
	_, err = c.Compile(loc)
	return err
}
