package reasoning

import (
	"slices"
	"testing"
	"unicode/utf8"
)

type testCase struct {
	name, output       string
	reasoning, content string
}

func newTestParser(t testing.TB, name string, opts Options) *Parser {
	t.Helper()
	p, err := New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runCases checks each case whole and streamed at every split.
func runCases(t *testing.T, parser string, opts Options, cases []testCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newTestParser(t, parser, opts)
			got := p.Extract(c.output)
			if got != (Result{Reasoning: c.reasoning, Content: c.content}) {
				t.Errorf("got reasoning %q content %q, want %q %q", got.Reasoning, got.Content, c.reasoning, c.content)
			}
			checkSplits(t, p, c.output)
		})
	}
}

// checkSplits streams text in two pieces at every byte offset, then a byte
// and a rune at a time, and wants the whole-text result each time.
func checkSplits(t *testing.T, p *Parser, text string) {
	t.Helper()
	want := p.Extract(text)
	for k := 0; k <= len(text); k++ {
		if got := streamed(t, p, text[:k], text[k:]); got != want {
			t.Fatalf("split at byte %d (%q | %q): got %+v, want %+v", k, text[:k], text[k:], got, want)
		}
	}
	var bytes, runes []string
	for i := 0; i < len(text); i++ {
		bytes = append(bytes, text[i:i+1])
	}
	for i, r := range text {
		runes = append(runes, text[i:i+utf8.RuneLen(r)])
	}
	if got := streamed(t, p, bytes...); got != want {
		t.Fatalf("byte at a time: got %+v, want %+v", got, want)
	}
	if got := streamed(t, p, runes...); got != want {
		t.Fatalf("rune at a time: got %+v, want %+v", got, want)
	}
}

// streamed feeds the pieces to a new stream and joins its deltas, checking
// that no delta carries both kinds and that each is whole UTF-8 (when
// the text is).
func streamed(t testing.TB, p *Parser, pieces ...string) Result {
	t.Helper()
	s := p.NewStream()
	var deltas []Delta
	whole := ""
	for _, piece := range pieces {
		whole += piece
	}
	valid := utf8.ValidString(whole)
	for _, piece := range pieces {
		before := slices.Clone(deltas)
		deltas = s.Feed(deltas, piece)
		if !slices.Equal(before, deltas[:len(before)]) {
			t.Fatalf("deltas already handed out changed: %+v -> %+v", before, deltas[:len(before)])
		}
	}
	deltas = s.Finish(deltas)
	var r Result
	for _, d := range deltas {
		if d.Reasoning != "" && d.Content != "" || d.Reasoning == "" && d.Content == "" {
			t.Fatalf("delta %+v: want exactly one of reasoning and content", d)
		}
		if valid && (!utf8.ValidString(d.Reasoning) || !utf8.ValidString(d.Content)) {
			t.Fatalf("delta %+v splits a character", d)
		}
		r.Reasoning += d.Reasoning
		r.Content += d.Content
	}
	return r
}
