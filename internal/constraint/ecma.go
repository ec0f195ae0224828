package constraint

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// ECMA-262 whitespace and line terminators: the characters \s matches in a
// JSON Schema pattern (Go's \s is ASCII only).
const (
	ecmaSpace    = `\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`
	ecmaNotLineT = `[^\n\r\x{2028}\x{2029}]`
)

// ecmaToRE2 rewrites a JSON Schema (ECMA-262) pattern into RE2 syntax where
// the two differ in meaning: '.' excludes every line terminator, \s and \S
// are Unicode, \uXXXX escapes, \/ and the class escape \b (backspace).
// Constructs with no exact RE2 equivalent are an error.
func ecmaToRE2(p string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			s, err := ecmaEscape(p, &i, inClass)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			if strings.HasPrefix(p[i+1:], "^]") || strings.HasPrefix(p[i+1:], "]") {
				return "", fmt.Errorf("empty or negated-empty class in %q", p)
			}
			if strings.HasPrefix(p[i+1:], "^") {
				b.WriteByte('^')
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		case c == '.' && !inClass:
			b.WriteString(ecmaNotLineT)
		case c == '[' && inClass:
			b.WriteString(`\[`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// ecmaEscape translates the escape whose letter is p[*i].
func ecmaEscape(p string, i *int, inClass bool) (string, error) {
	c := p[*i]
	switch {
	case c == 's' && inClass:
		return ecmaSpace, nil
	case c == 's':
		return "[" + ecmaSpace + "]", nil
	case c == 'S' && !inClass:
		return "[^" + ecmaSpace + "]", nil
	case c == 'b' && inClass:
		return `\x08`, nil
	case c == 'u' && *i+4 < len(p) && isHex4(p[*i+1:*i+5]):
		s := `\x{` + p[*i+1:*i+5] + `}`
		*i += 4
		return s, nil
	case c == '0' && (*i+1 >= len(p) || p[*i+1] < '0' || p[*i+1] > '9'):
		return `\x00`, nil
	case c == 'v':
		return `\x{0B}`, nil
	case strings.IndexByte(`dDwWnrtfxpP`, c) >= 0:
		return `\` + string(c), nil
	case c == 'b' || c == 'B':
		return `\` + string(c), nil // an anchor: refused when translated
	case c < 0x80 && !isAlnum(c):
		return `\` + string(c), nil
	}
	return "", fmt.Errorf("unsupported escape \\%c in pattern %q", c, p)
}

func isHex4(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// jsonPattern compiles a JSON Schema pattern to the language of JSON string
// bodies (canonical form) whose value contains a match, and the range of
// the lengths of those values.
func jsonPattern(pattern string) (e *expr, lo, hi int, err error) {
	re, err := parseECMA(pattern)
	if err != nil {
		return nil, 0, 0, err
	}
	t := regexTranslator{enc: jsonChars}
	if e, err = t.containing(re); err != nil {
		return nil, 0, 0, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	lo, hi = containingLen(re)
	return e, lo, hi, nil
}

// ecmaRegexp compiles a JSON Schema pattern for matching at compile time
// (which named keys a patternProperties pattern covers).
func ecmaRegexp(pattern string) (*regexp.Regexp, error) {
	p, err := ecmaToRE2(pattern)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(p)
}

// parseECMA parses a JSON Schema pattern.
func parseECMA(pattern string) (*syntax.Regexp, error) {
	p, err := ecmaToRE2(pattern)
	if err != nil {
		return nil, err
	}
	re, err := parseRegex(p)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return re, nil
}
