package constraint

import "testing"

// accepts reports whether c allows exactly the whole of s.
func accepts(t *testing.T, c *Constraint, s string) bool {
	t.Helper()
	m, err := NewMatcher(byteVocab{})
	if err != nil {
		t.Fatal(err)
	}
	st := c.NewState(m)
	for i := range len(s) {
		if st.Advance(int32(s[i])) != nil {
			return false
		}
	}
	return st.IsAccepting()
}

func TestGrammars(t *testing.T) {
	tests := []struct {
		name, grammar string
		yes, no       []string
	}{
		{"gbnf", `
# a tiny list
root ::= "[" ws item ("," ws item)* "]"
item ::= [a-c]+ | num
num  ::= [0-9]{1,3} ("." [0-9]+)?
ws   ::= [ \t]?`,
			[]string{"[a]", "[ abc, 12.5,1]", "[999]"}, []string{"[]", "[d]", "[1234]", "[a,]", "[a"}},
		{"gbnf negated class and any", `root ::= "\"" [^"\\]* "\"" .`, []string{`"ab"x`, `""é`}, []string{`"a"`, `"a\"b"x`}},
		{"lark", `
?start: pair ("," pair)*
pair: KEY ":" VALUE -> kv
KEY: /[a-z]+/
VALUE: "0".."9" ~ 1..2 | "yes"i | [ "-" ] "x"`,
			[]string{"a:1", "a:12,b:yes", "k:-x", "k:x"}, []string{"a:123", "A:1", "a:", "a:1,"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Grammar(tt.grammar)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.yes {
				if !accepts(t, c, s) {
					t.Errorf("rejects %q", s)
				}
			}
			for _, s := range tt.no {
				if accepts(t, c, s) {
					t.Errorf("accepts %q", s)
				}
			}
		})
	}
}

func TestGrammarErrors(t *testing.T) {
	for _, g := range []string{
		`root ::= root "a" | "b"`,               // left recursion
		`root ::= missing`,                      // undefined rule
		"start: x\n%import common.WS\nx: \"a\"", // directive
		`other ::= "a"`,                         // no start rule
		`root ::= "a" (`,                        // unbalanced
		`root ::= "a"{2,x}`,                     // bad count
	} {
		if _, err := Grammar(g); err == nil {
			t.Errorf("Grammar(%q) compiled; want an error", g)
		}
	}
}
