package reasoning

import "testing"

// fuzzStream checks, for any output, that streaming it in three pieces and
// a byte at a time gives the whole-text split. The seed corpus is the
// parser's test outputs.
func fuzzStream(f *testing.F, parser string, opts Options, cases ...[]testCase) {
	for _, cs := range cases {
		for _, c := range cs {
			f.Add(c.output, uint16(len(c.output)/3), uint16(2*len(c.output)/3))
		}
	}
	p := newTestParser(f, parser, opts)
	f.Fuzz(func(t *testing.T, text string, a, b uint16) {
		want := p.Extract(text)
		i, j := int(a)%(len(text)+1), int(b)%(len(text)+1)
		i, j = min(i, j), max(i, j)
		if got := streamed(t, p, text[:i], text[i:j], text[j:]); got != want {
			t.Fatalf("pieces %q %q %q: got %+v, want %+v", text[:i], text[i:j], text[j:], got, want)
		}
		pieces := make([]string, len(text))
		for k := 0; k < len(text); k++ {
			pieces[k] = text[k : k+1]
		}
		if got := streamed(t, p, pieces...); got != want {
			t.Fatalf("byte at a time: got %+v, want %+v", got, want)
		}
	})
}

func FuzzDeepSeekR1(f *testing.F) { fuzzStream(f, "deepseek_r1", Options{}, deepSeekR1Cases) }
func FuzzQwen3(f *testing.F)      { fuzzStream(f, "qwen3", Options{}, qwen3Cases) }
func FuzzGptOSS(f *testing.F)     { fuzzStream(f, "gpt-oss", Options{}, gptOSSCases) }
