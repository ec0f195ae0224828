package constraint

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// gTokKind is the kind of a grammar token.
type gTokKind uint8

const (
	gIdent  gTokKind = iota
	gDefine          // ::= or :
	gString          // "..." or '...' (text holds the decoded bytes)
	gClass           // [...] in GBNF (text holds the source inside)
	gRegex           // /.../flags (Lark)
	gPunct           // ( ) | * + ? { } [ ] ~ , .. . -> and numbers
	gNumber
	gDirective // %import, %ignore...
)

type gTok struct {
	kind gTokKind
	text string
	line int
	fold bool // a Lark "literal"i: case-insensitive
}

// lexGrammar splits an EBNF (GBNF or Lark) grammar into tokens.
func lexGrammar(src string, gbnf bool) ([]gTok, error) {
	var toks []gTok
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		default:
			t, n, err := lexOne(src[i:], gbnf)
			if err != nil {
				return nil, fmt.Errorf("grammar line %d: %w", line, err)
			}
			t.line = line
			toks = append(toks, t)
			i += n
		}
	}
	return toks, nil
}

// lexOne reads the token at the start of s and its length.
func lexOne(s string, gbnf bool) (gTok, int, error) {
	c := s[0]
	switch {
	case strings.HasPrefix(s, "::="):
		return gTok{kind: gDefine}, 3, nil
	case strings.HasPrefix(s, "->") || strings.HasPrefix(s, ".."):
		return gTok{kind: gPunct, text: s[:2]}, 2, nil
	case c == '"' || c == '\'':
		t, n, err := lexString(s)
		if err == nil && !gbnf && n < len(s) && s[n] == 'i' && identLen(s[n:]) == 1 {
			t.fold, n = true, n+1
		}
		return t, n, err
	case c == '[' && gbnf:
		end := classEnd(s)
		if end < 0 {
			return gTok{}, 0, fmt.Errorf("unterminated character class")
		}
		return gTok{kind: gClass, text: s[1:end]}, end + 1, nil
	case c == '/' && !gbnf:
		end := regexEnd(s)
		if end < 0 {
			return gTok{}, 0, fmt.Errorf("unterminated regex")
		}
		n := end + 1
		for n < len(s) && strings.IndexByte("imslux", s[n]) >= 0 {
			n++
		}
		return gTok{kind: gRegex, text: s[:n]}, n, nil
	case c == ':' && !gbnf:
		return gTok{kind: gDefine}, 1, nil
	case c == '%':
		n := identLen(s[1:]) + 1
		return gTok{kind: gDirective, text: s[:n]}, n, nil
	case '0' <= c && c <= '9':
		n := 0
		for n < len(s) && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		return gTok{kind: gNumber, text: s[:n]}, n, nil
	case strings.IndexByte("()|*+?{}[]~,.", c) >= 0:
		return gTok{kind: gPunct, text: s[:1]}, 1, nil
	}
	start := 0
	if c == '?' || c == '!' {
		start = 1
	}
	if n := identLen(s[start:]); n > 0 {
		return gTok{kind: gIdent, text: s[start : start+n]}, start + n, nil
	}
	r, _ := utf8.DecodeRuneInString(s)
	return gTok{}, 0, fmt.Errorf("unexpected %q", r)
}

func identLen(s string) int {
	n := 0
	for n < len(s) && (isAlnum(s[n]) || s[n] == '_' || s[n] == '-' && n > 0) {
		n++
	}
	return n
}

// lexString decodes a quoted literal with C/JSON-style escapes.
func lexString(s string) (gTok, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case q:
			return gTok{kind: gString, text: b.String()}, i + 1, nil
		case '\n':
			return gTok{}, 0, fmt.Errorf("newline in a string literal")
		case '\\':
			r, n, err := unescape(s[i:])
			if err != nil {
				return gTok{}, 0, err
			}
			b.WriteString(r)
			i += n - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return gTok{}, 0, fmt.Errorf("unterminated string literal")
}

// unescape decodes the escape at the start of s (which begins with '\\').
func unescape(s string) (string, int, error) {
	if len(s) < 2 {
		return "", 0, fmt.Errorf("dangling backslash")
	}
	switch s[1] {
	case 'n':
		return "\n", 2, nil
	case 't':
		return "\t", 2, nil
	case 'r':
		return "\r", 2, nil
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[1]]
		if len(s) < 2+n {
			return "", 0, fmt.Errorf("short \\%c escape", s[1])
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		if err != nil {
			return "", 0, fmt.Errorf("bad \\%c escape", s[1])
		}
		if s[1] == 'x' {
			return string([]byte{byte(v)}), 2 + n, nil
		}
		return string(rune(v)), 2 + n, nil
	}
	return s[1:2], 2, nil
}

func classEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ']':
			if i > 1 && !(i == 2 && s[1] == '^') {
				return i
			}
		}
	}
	return -1
}

func regexEnd(s string) int {
	inClass := false
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				return i
			}
		case '\n':
			return -1
		}
	}
	return -1
}
