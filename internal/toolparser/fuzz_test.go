package toolparser

import (
	"encoding/json"
	"testing"
)

// fuzzStream checks, for any output, that streaming it in three pieces
// and a byte at a time gives the whole-text result, that the deltas keep
// the OpenAI protocol, and that an output without calls comes back whole
// as content. The seed corpus is the parser's test outputs.
func fuzzStream(f *testing.F, parser string, tools []Tool, cases ...[]testCase) {
	for _, cs := range cases {
		for _, c := range cs {
			f.Add(c.output, uint16(len(c.output)/3), uint16(2*len(c.output)/3))
		}
	}
	p := newTestParser(f, parser, tools)
	f.Fuzz(func(t *testing.T, text string, a, b uint16) {
		want := p.Extract(text)
		if len(want.ToolCalls) == 0 && want.Content != text {
			t.Fatalf("no calls, content %q != output %q", want.Content, text)
		}
		for _, c := range want.ToolCalls {
			if parser != "openai" && !json.Valid([]byte(c.Arguments)) { // openai passes non-JSON text on, as vLLM does
				t.Fatalf("arguments %q are not JSON", c.Arguments)
			}
		}
		i, j := int(a)%(len(text)+1), int(b)%(len(text)+1)
		i, j = min(i, j), max(i, j)
		if got := streamed(t, p, text[:i], text[i:j], text[j:]); !sameResult(got, want) {
			t.Fatalf("pieces %q %q %q: got %+v, want %+v", text[:i], text[i:j], text[j:], got, want)
		}
		pieces := make([]string, len(text))
		for k := 0; k < len(text); k++ {
			pieces[k] = text[k : k+1]
		}
		if got := streamed(t, p, pieces...); !sameResult(got, want) {
			t.Fatalf("byte at a time: got %+v, want %+v", got, want)
		}
	})
}

func FuzzHermes(f *testing.F)     { fuzzStream(f, "hermes", nil, hermesCases, hermesOwnCases) }
func FuzzLlama3JSON(f *testing.F) { fuzzStream(f, "llama3_json", nil, llamaCases) }
func FuzzMistral(f *testing.F)    { fuzzStream(f, "mistral", nil, mistralCases, mistralTokenCases) }
func FuzzPythonic(f *testing.F)   { fuzzStream(f, "pythonic", nil, pythonicCases, pythonicOwnCases) }
func FuzzDeepSeekV3(f *testing.F) { fuzzStream(f, "deepseek_v3", nil, deepSeekCases) }
func FuzzGranite(f *testing.F)    { fuzzStream(f, "granite", nil, graniteCases) }
func FuzzOpenAI(f *testing.F)     { fuzzStream(f, "openai", nil, openAICases) }

func FuzzQwen3Coder(f *testing.F) {
	tools := []Tool{
		{Name: "get_current_weather", Parameters: json.RawMessage(qcWeatherParams)},
		{Name: "calculate_area", Parameters: json.RawMessage(qcAreaParams)},
	}
	fuzzStream(f, "qwen3_coder", tools, qwenCases)
}
