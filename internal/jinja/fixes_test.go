package jinja

import "testing"

// The expected strings are what Python's Jinja2 (with transformers' tojson:
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=False)) prints for the same template and data, written from
// Python's documented semantics for %-formatting, str.format-free filters
// and json.dumps.
func TestPythonSemantics(t *testing.T) {
	d := NewDict()
	d.AsDict().Set("z", NewString("é<&"))
	d.AsDict().Set("a", NewList([]Value{NewInt(1), NewFloat(2.5), NewFloat(3)}))
	d.AsDict().Set("items", NewString("key named items"))
	empty := NewDict()
	data := map[string]Value{"d": d, "e": empty, "xs": FromGoValue([]any{1, 2, 3}), "n": None()}
	for _, c := range []struct{ src, want string }{
		{"{% for x in xs if x > 1 %}{{ x }}{% endfor %}", "23"},
		{"{{ 'a%sb%d' % ('X', 3) }}", "aXb3"},
		{"{{ '%s' % 'one' }}", "one"},
		{"{{ '%5.2f|%-4d|%%|%r' % (3.14159, 7, 'q') }}", " 3.14|7   |%|'q'"},
		{"{{ '%(who)s!' % {'who': 'you'} }}", "you!"},
		{"{{ '%s' % n }}", "None"},
		{"{{ '%s-%s'|format('a', 'b') }}", "a-b"},
		{"{{ d|tojson }}", `{"z": "é<&", "a": [1, 2.5, 3.0], "items": "key named items"}`},
		{"{{ d|tojson(indent=2) }}", "{\n  \"z\": \"é<&\",\n  \"a\": [\n    1,\n    2.5,\n    3.0\n  ],\n  \"items\": \"key named items\"\n}"},
		{"{{ e|tojson(indent=4) }}", "{}"},
		{"{{ d.z|tojson(ensure_ascii=True) }}", `"\u00e9<&"`},
		{"{{ '🙂'|tojson(ensure_ascii=True) }}", `"\ud83d\ude42"`},
		{"{{ d|tojson(separators=(',', ':'), sort_keys=True) }}", `{"a":[1,2.5,3.0],"items":"key named items","z":"é<&"}`},
		{"{% for k, v in d.items() %}{{ k }};{% endfor %}", "z;a;items;"},
		{"{{ d['items'] }}", "key named items"},
	} {
		tmpl, err := Compile(c.src)
		if err != nil {
			t.Errorf("%s: compile: %v", c.src, err)
			continue
		}
		got, err := tmpl.RenderValues(data)
		if err != nil || got != c.want {
			t.Errorf("%s\n got %q, %v\nwant %q", c.src, got, err, c.want)
		}
	}
}

func TestPercentFormatErrors(t *testing.T) {
	for _, src := range []string{"{{ '%s %s' % ('a',) }}", "{{ '%s' % ('a', 'b') }}", "{{ '%q' % 1 }}", "{{ '%(x)s' % 1 }}"} {
		tmpl, err := Compile(src)
		if err != nil {
			continue
		}
		if got, err := tmpl.RenderValues(nil); err == nil {
			t.Errorf("%s: no error, rendered %q", src, got)
		}
	}
}
