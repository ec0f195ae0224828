package toolparser

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

// tc is one expected call: the id is checked for its form only.
type tc struct{ name, args string }

// testCase is a canned model output and the parse vLLM's tests expect.
type testCase struct {
	name    string
	output  string
	content string
	calls   []tc
}

// newTestParser builds a parser whose ids come from a fixed seed.
func newTestParser(t testing.TB, name string, tools []Tool) *Parser {
	t.Helper()
	p, err := New(name, tools, Options{Rand: rand.NewChaCha8([32]byte{1})})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var idForm = map[string]*regexp.Regexp{
	"mistral": regexp.MustCompile(`^[a-zA-Z0-9]{9}$`),
	"":        regexp.MustCompile(`^chatcmpl-tool-[0-9a-f]{32}$`),
}

// runCases checks each case whole and streamed at every split.
func runCases(t *testing.T, parser string, tools []Tool, cases []testCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newTestParser(t, parser, tools)
			got := p.Extract(c.output)
			if got.Content != c.content {
				t.Errorf("content = %q, want %q", got.Content, c.content)
			}
			checkCalls(t, parser, got.ToolCalls, c.calls)
			checkSplits(t, p, c.output)
		})
	}
}

func checkCalls(t *testing.T, parser string, got []ToolCall, want []tc) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d calls %+v, want %d %+v", len(got), got, len(want), want)
	}
	form := idForm[parser]
	if form == nil {
		form = idForm[""]
	}
	seen := map[string]bool{}
	for i, g := range got {
		if g.Name != want[i].name || g.Arguments != want[i].args {
			t.Errorf("call %d = %s(%s), want %s(%s)", i, g.Name, g.Arguments, want[i].name, want[i].args)
		}
		if !form.MatchString(g.ID) || seen[g.ID] {
			t.Errorf("call %d: id %q is not a fresh id of the form %s", i, g.ID, form)
		}
		seen[g.ID] = true
	}
}

// checkSplits streams text in two pieces at every byte offset, then one
// byte and one rune at a time, and wants the whole-text result each time.
func checkSplits(t *testing.T, p *Parser, text string) {
	t.Helper()
	want := p.Extract(text)
	for k := 0; k <= len(text); k++ {
		if got := streamed(t, p, text[:k], text[k:]); !sameResult(got, want) {
			t.Fatalf("split at byte %d (%q | %q): got %+v, want %+v", k, text[:k], text[k:], got, want)
		}
	}
	bytes := make([]string, len(text))
	for i := 0; i < len(text); i++ {
		bytes[i] = text[i : i+1]
	}
	if got := streamed(t, p, bytes...); !sameResult(got, want) {
		t.Fatalf("byte at a time: got %+v, want %+v", got, want)
	}
	var runes []string
	for i, r := range text {
		runes = append(runes, text[i:i+utf8.RuneLen(r)])
	}
	if got := streamed(t, p, runes...); !sameResult(got, want) {
		t.Fatalf("rune at a time: got %+v, want %+v", got, want)
	}
}

// streamed feeds the pieces to a new stream and assembles its deltas,
// checking the OpenAI delta protocol on the way: indices count up from 0,
// id and name come with the first delta of a call only, and content
// deltas are whole UTF-8 (when the text is).
func streamed(t testing.TB, p *Parser, pieces ...string) Result {
	t.Helper()
	s := p.NewStream()
	var deltas []Delta
	valid := utf8.ValidString(concat(pieces))
	for _, piece := range pieces {
		n, before := len(deltas), slices.Clone(deltas)
		deltas = s.Feed(deltas, piece)
		checkUTF8(t, deltas[n:], valid)
		checkUntouched(t, before, deltas)
	}
	n, before := len(deltas), slices.Clone(deltas)
	deltas = s.Finish(deltas)
	checkUTF8(t, deltas[n:], valid)
	checkUntouched(t, before, deltas)
	return assemble(t, deltas)
}

// checkUntouched: a Feed only appends; the deltas the caller had stay as
// they were.
func checkUntouched(t testing.TB, before, after []Delta) {
	t.Helper()
	if !slices.Equal(before, after[:len(before)]) {
		t.Fatalf("deltas already handed out changed: %+v -> %+v", before, after[:len(before)])
	}
}

func checkUTF8(t testing.TB, deltas []Delta, valid bool) {
	t.Helper()
	for _, d := range deltas {
		if valid && !utf8.ValidString(d.Content) {
			t.Fatalf("content delta %q splits a character", d.Content)
		}
	}
}

func assemble(t testing.TB, deltas []Delta) Result {
	t.Helper()
	var r Result
	for _, d := range deltas {
		if d.Tool == nil {
			r.Content += d.Content
			continue
		}
		switch tool := d.Tool; {
		case d.Content != "":
			t.Fatalf("delta with both content and a call: %+v", d)
		case tool.Index == len(r.ToolCalls):
			if tool.ID == "" || tool.Name == "" {
				t.Fatalf("first delta of call %d lacks id or name: %+v", tool.Index, tool)
			}
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tool.ID, Name: tool.Name, Arguments: tool.Arguments})
		case tool.Index == len(r.ToolCalls)-1:
			if tool.ID != "" || tool.Name != "" {
				t.Fatalf("later delta of call %d repeats id or name: %+v", tool.Index, tool)
			}
			r.ToolCalls[tool.Index].Arguments += tool.Arguments
		default:
			t.Fatalf("delta for call %d after %d calls", tool.Index, len(r.ToolCalls))
		}
	}
	return r
}

// sameResult compares content, names and arguments (ids are drawn anew
// by each stream).
func sameResult(a, b Result) bool {
	return a.Content == b.Content && slices.EqualFunc(a.ToolCalls, b.ToolCalls, func(x, y ToolCall) bool {
		return x.Name == y.Name && x.Arguments == y.Arguments
	})
}

func concat(pieces []string) string {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range pieces {
		b = append(b, p...)
	}
	return string(b)
}
