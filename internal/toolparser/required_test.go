package toolparser

import (
	"bytes"
	"reflect"
	"testing"
)

// TestParseRequired: vLLM turns each {"name", "parameters"} of the
// required-choice array into a call whose arguments are
// json.dumps(parameters, ensure_ascii=False) (serving_chat.py); the
// expected argument texts are what Python prints for these objects.
func TestParseRequired(t *testing.T) {
	zeros := bytes.NewReader(make([]byte, 64))
	got, err := ParseRequired(`[{"name":"get_weather","parameters":{"city":"Zürich","days":3,"opts":{"unit":"c","x":[1,2.5]}}}, {"name": "noop", "parameters": {}}]`, zeros)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "chatcmpl-tool-00000000000000000000000000000000", Name: "get_weather", Arguments: `{"city": "Zürich", "days": 3, "opts": {"unit": "c", "x": [1, 2.5]}}`},
		{ID: "chatcmpl-tool-00000000000000000000000000000000", Name: "noop", Arguments: `{}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{`[]`, `{"name":"a","parameters":{}}`, `[{"name":"a"}]`, `[{"name":1,"parameters":{}}]`, `[{"name":"a","parameters":{}}`} {
		if _, err := ParseRequired(bad, nil); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
