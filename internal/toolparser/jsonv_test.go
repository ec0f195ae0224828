package toolparser

import (
	"slices"
	"strings"
	"testing"
)

// TestDumps: JSON texts and what Python's json.dumps(json.loads(text),
// ensure_ascii=False) prints for them (CPython 3, run by hand).
func TestDumps(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1e16", "1e+16"}, {"1.5e16", "1.5e+16"}, {"1e-5", "1e-05"}, {"0.0001", "0.0001"},
		{"123.0", "123.0"}, {"0.1", "0.1"}, {"-0.0", "-0.0"}, {"1e22", "1e+22"},
		{"2.5e-7", "2.5e-07"}, {"100000.0", "100000.0"}, {"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"5e-324", "5e-324"}, {"3.14", "3.14"}, {"1E5", "100000.0"}, {"-12.50", "-12.5"}, {"0.00012345", "0.00012345"},
		{"[-0, 123456789012345678901234567890]", "[0, 123456789012345678901234567890]"},
		{`{"a":1,"b":{"c":[true,false,null]},"a":2}`, `{"a": 2, "b": {"c": [true, false, null]}}`},
		{`"\u00e9\ud83c\udf89\/\u001f"`, `"é🎉/\u001f"`},
		{` { } `, `{}`},
	} {
		v, err := parseJSON(c.in)
		if err != nil {
			t.Errorf("parseJSON(%s): %v", c.in, err)
			continue
		}
		if got := v.dumpString(); got != c.want {
			t.Errorf("dumps(loads(%s)) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestParseJSONRefuses: texts Python's json.loads refuses (or accepts with
// a json.dumps result that is not JSON).
func TestParseJSONRefuses(t *testing.T) {
	for _, in := range []string{"", "{", `{"a" 1}`, "[1,]", "01", "1.", "NaN", "Infinity", "1e400", "\"a\nb\"", "{} x", `"\x"`, strings.Repeat("[", maxDepth+2)} {
		if v, err := parseJSON(in); err == nil {
			t.Errorf("parseJSON(%q) = %s, want an error", in, v.dumpString())
		}
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"deepseek_v3", "granite", "hermes", "llama3_json", "mistral", "openai", "pythonic", "qwen3_coder"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if _, err := New("no_such_parser", nil, Options{}); err == nil || !strings.Contains(err.Error(), "hermes") {
		t.Fatalf("New(unknown) error = %v, want one listing the known names", err)
	}
	p, err := New("hermes", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Markers(); !slices.Equal(m, []string{"<tool_call>", "</tool_call>"}) {
		t.Fatalf("hermes markers = %v", m)
	}
	if id := p.Extract(`<tool_call>{"name": "f", "arguments": {}}</tool_call>`).ToolCalls[0].ID; !idForm[""].MatchString(id) {
		t.Fatalf("crypto/rand id %q", id)
	}
}
