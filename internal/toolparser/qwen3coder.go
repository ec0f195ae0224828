package toolparser

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	qcFunction  = "<function="
	qcFuncEnd   = "</function>"
	qcParameter = "<parameter="
	qcParamEnd  = "</parameter>"
)

// qwen3Coder is Qwen3-Coder's XML format (vLLM qwen3coder_tool_parser.py):
//
//	<tool_call>
//	<function=NAME>
//	<parameter=P>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// A bare <function=…>…</function> without the tool_call tags is a call
// too. Each VALUE is converted by the type the request's schema gives P.
type qwen3Coder struct {
	types map[string]map[string]string // tool → parameter → type
}

func newQwen3Coder(tools []Tool) (format, error) {
	q := qwen3Coder{types: map[string]map[string]string{}}
	for _, t := range tools {
		if len(t.Parameters) == 0 {
			continue
		}
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("toolparser: tool %q: parameters: %w", t.Name, err)
		}
		types := map[string]string{}
		for p, s := range schema.Properties {
			types[p] = schemaType(s)
		}
		q.types[t.Name] = types
	}
	return q, nil
}

// schemaType is the type a property schema declares, lower-cased: its
// "type" (the first non-null one of a list), else the first non-null type
// of its anyOf/oneOf; "string" when none is given.
func schemaType(s any) string {
	m, _ := s.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return strings.ToLower(strings.TrimSpace(t))
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok && str != "null" {
				return strings.ToLower(str)
			}
		}
	}
	for _, key := range [...]string{"anyOf", "oneOf"} {
		alts, _ := m[key].([]any)
		for _, a := range alts {
			if t := schemaType(a); t != "null" {
				return t
			}
		}
	}
	return "string"
}

func (qwen3Coder) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, hermesStart, qcFunction)
	return start, hold
}

func (qwen3Coder) findEnd(s string, st *scan) int {
	if strings.HasPrefix(s, hermesStart) {
		return literalEnd(s, st.scanned, hermesEnd)
	}
	end := st.found // a </function> found while the tool_call tag was awaited
	if end == 0 {
		if end = literalEnd(s, st.scanned, qcFuncEnd); end < 0 {
			return -1
		}
		st.found = end
	}
	// A bare function may still be followed by the closing tool_call tag
	// whose opening the model left out: it belongs to the call.
	rest := s[skipSpace(s, end):]
	switch {
	case strings.HasPrefix(rest, hermesEnd):
		return len(s) - len(rest) + len(hermesEnd)
	case strings.HasPrefix(hermesEnd, rest):
		return -1
	}
	return end
}

func (qwen3Coder) isSep(c byte) bool { return isSpace(c) }

func (q qwen3Coder) parse(region string) ([]call, bool) {
	body := strings.TrimSuffix(strings.TrimPrefix(region, hermesStart), hermesEnd)
	var calls []call
	for {
		i := strings.Index(body, qcFunction)
		if i < 0 {
			break
		}
		body = body[i+len(qcFunction):]
		name, rest, ok := strings.Cut(body, ">")
		if !ok || name == "" || strings.ContainsAny(name, "<> \t\r\n") {
			return nil, false
		}
		fn, after, _ := strings.Cut(rest, qcFuncEnd)
		calls = append(calls, call{name: name, args: q.arguments(name, fn)})
		body = after
	}
	return calls, len(calls) > 0
}

// arguments reads the <parameter=…> elements of one function. A parameter
// ends at its closing tag or, when that is missing, at the next parameter.
func (q qwen3Coder) arguments(fn, body string) string {
	args := value{k: kObj}
	for {
		i := strings.Index(body, qcParameter)
		if i < 0 {
			break
		}
		body = body[i+len(qcParameter):]
		name, rest, ok := strings.Cut(body, ">")
		if !ok {
			break
		}
		end := len(rest)
		if j := strings.Index(rest, qcParamEnd); j >= 0 {
			end = j
		}
		if j := strings.Index(rest, qcParameter); j >= 0 && j < end {
			end = j
		}
		raw := strings.TrimSuffix(strings.TrimPrefix(rest[:end], "\n"), "\n")
		args.set(name, q.convert(fn, name, raw))
		body = rest[end:]
	}
	return args.dumpString()
}

// convert types a parameter's text as vLLM's _convert_param_value does.
func (q qwen3Coder) convert(fn, param, raw string) value {
	if strings.ToLower(raw) == "null" {
		return value{}
	}
	t, ok := q.types[fn][param]
	if !ok {
		return value{k: kStr, s: raw}
	}
	switch {
	case t == "string" || t == "str" || t == "text" || t == "varchar" || t == "char" || t == "enum":
		return value{k: kStr, s: raw}
	case hasAnyPrefix(t, "int", "uint", "long", "short", "unsigned"):
		if v, ok := pyInt(raw); ok {
			return v
		}
	case hasAnyPrefix(t, "num", "float"):
		if v, ok := pyFloatValue(raw); ok {
			return v
		}
	case t == "boolean" || t == "bool" || t == "binary":
		return value{k: kBool, b: strings.ToLower(strings.TrimSpace(raw)) == "true"}
	default:
		if v, err := parseJSON(raw); err == nil {
			return v
		}
		if v, ok := parsePyLiteral(raw); ok {
			return v
		}
	}
	return value{k: kStr, s: raw}
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// pyInt is Python's int(text) for decimal text.
func pyInt(text string) (value, bool) {
	t := strings.TrimSpace(text)
	digits := strings.TrimLeft(t, "+-")
	if len(t)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return value{}, false
	}
	v, err := numberValue(strings.TrimPrefix(t, "+"), false)
	return v, err == nil
}

// pyFloatValue is vLLM's float conversion: float(text), written as an int
// when it has no fractional part.
func pyFloatValue(text string) (value, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return value{}, false
	}
	if f == 0 {
		return value{k: kNum, s: "0"}, true
	}
	if f == math.Trunc(f) {
		return value{k: kNum, s: strconv.FormatFloat(f, 'f', -1, 64)}, true
	}
	return value{k: kNum, s: pyFloat(f)}, true
}
