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
