package toolparser

import (
	"strings"
	"testing"
)

// BenchmarkStreamHermes streams a 1 KiB answer and two calls in 4-byte
// deltas, as a detokenizer hands them out, reusing the delta slice.
func BenchmarkStreamHermes(b *testing.B) {
	text := strings.Repeat("Some prose about the weather, with é and ☀. ", 24) +
		"<tool_call>\n" + `{"name": "get_weather", "arguments": {"city": "Zürich", "days": [1, 2, 3]}}` + "\n</tool_call>\n" +
		"<tool_call>\n" + `{"name": "get_time", "arguments": {"tz": "Europe/Zurich"}}` + "\n</tool_call>"
	p := newTestParser(b, "hermes", nil)
	var deltas []Delta
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s := p.NewStream()
		for i := 0; i < len(text); i += 4 {
			deltas = s.Feed(deltas[:0], text[i:min(i+4, len(text))])
		}
		deltas = s.Finish(deltas[:0])
	}
}

// BenchmarkStreamLongCall streams one qwen3_coder call whose parameter is
// 16 KiB of code, in 4-byte deltas: the held call must not be copied anew
// at each delta.
func BenchmarkStreamLongCall(b *testing.B) {
	text := "<tool_call>\n<function=write_file>\n<parameter=content>\n" +
		strings.Repeat("fmt.Println(\"héllo\") // a line of code\n", 400) +
		"</parameter>\n</function>\n</tool_call>"
	p := newTestParser(b, "qwen3_coder", nil)
	var deltas []Delta
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s := p.NewStream()
		for i := 0; i < len(text); i += 4 {
			deltas = s.Feed(deltas[:0], text[i:min(i+4, len(text))])
		}
		deltas = s.Finish(deltas[:0])
	}
}

// BenchmarkStreamLongJSONCall is the same for a llama3_json call, whose
// end is found by matching brackets.
func BenchmarkStreamLongJSONCall(b *testing.B) {
	text := `{"name": "write_file", "parameters": {"content": "` +
		strings.Repeat(`fmt.Println(\"héllo\") // a line of code\n`, 400) + `"}}`
	p := newTestParser(b, "llama3_json", nil)
	var deltas []Delta
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s := p.NewStream()
		for i := 0; i < len(text); i += 4 {
			deltas = s.Feed(deltas[:0], text[i:min(i+4, len(text))])
		}
		deltas = s.Finish(deltas[:0])
	}
}
