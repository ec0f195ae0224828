package constraint

import "fmt"

// Each supported format is an RE2 regex for a strict subset of the strings
// the format allows (checked against github.com/santhosh-tekuri/jsonschema's
// format assertions in the tests): the output is always a valid instance,
// but not every valid instance can be produced (e.g. lowercase 't'/'z' in a
// date-time, leap seconds, IP-literal hosts).
const (
	reYear      = `[0-9]{4}`
	reLeapYear  = `([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)`
	reMonthDay  = `((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))`
	reDate      = `(` + reYear + `-` + reMonthDay + `|` + reLeapYear + `-02-29)`
	reTime      = `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])`
	reLabel     = `[A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?`
	reTopLabel  = `[A-Za-z]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?`
	reHostname  = `(` + reLabel + `\.){0,4}` + reTopLabel
	reIPv4Octet = `(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])`
	rePChar     = `([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})`
)

var formatRegex = map[string]string{
	"date":      reDate,
	"time":      reTime,
	"date-time": reDate + `T` + reTime,
	"uuid":      `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
	"ipv4":      reIPv4Octet + `(\.` + reIPv4Octet + `){3}`,
	"hostname":  reHostname,
	"email":     `[A-Za-z0-9_+-]{1,30}(\.[A-Za-z0-9_+-]{1,16}){0,2}@(` + reLabel + `\.){1,3}[A-Za-z]{2,10}`,
	"uri": `[a-zA-Z][a-zA-Z0-9+.-]{0,31}:(//(` + reHostname + `(:[1-9][0-9]{0,3})?)?(/` + rePChar + `*)*|` +
		rePChar + `+(/` + rePChar + `*)*)?(\?(` + rePChar + `|[/?])*)?(#(` + rePChar + `|[/?])*)?`,
}

// knownFormats are the formats a JSON Schema validator asserts; one of them
// without a regex above cannot be enforced and is an error. Other format
// names are annotations no validator checks, and are ignored.
var knownFormats = map[string]bool{
	"date": true, "time": true, "date-time": true, "duration": true, "period": true,
	"email": true, "idn-email": true, "hostname": true, "idn-hostname": true,
	"ipv4": true, "ipv6": true, "uri": true, "uri-reference": true, "iri": true,
	"iri-reference": true, "uri-template": true, "uuid": true, "json-pointer": true,
	"relative-json-pointer": true, "regex": true, "semver": true,
}

// formatExpr is the JSON string body of a string in format f and the range
// of its lengths; ok is false for an unknown format (not asserted: no
// constraint).
func formatExpr(f string) (e *expr, lo, hi int, ok bool, err error) {
	re, has := formatRegex[f]
	if !has {
		if knownFormats[f] {
			return nil, 0, 0, true, &UnsupportedError{Feature: "format: " + f}
		}
		return nil, 0, 0, false, nil
	}
	parsed, err := parseRegex(re)
	if err != nil {
		panic(fmt.Sprintf("constraint: format %s: %v", f, err))
	}
	t := regexTranslator{enc: jsonChars}
	e, err = t.fullMatch(parsed)
	if err != nil {
		panic(fmt.Sprintf("constraint: format %s: %v", f, err))
	}
	lo, hi = matchLen(parsed)
	return e, lo, hi, true, nil
}
