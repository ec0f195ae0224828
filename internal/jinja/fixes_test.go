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
		{`{{ ["it's", 'a"b', 'x\ny', 'back\\slash', 'é'] }}|{{ {"k'": 1} }}`, `["it's", 'a"b', 'x\ny', 'back\\slash', 'é']|{"k'": 1}`},
		{"{{ 3.0 }}|{{ 2.5 }}|{{ [0.0001, 10 ** 16 * 1.0] }}|{{ 7 / 2 }}", "3.0|2.5|[0.0001, 1e+16]|3.5"},
		{"{{ n }}|{{ n ~ 'x' }}|{{ n|string }}|{{ [n] }}|{{ undefined_name }}|", "None|Nonex|None|[None]||"},
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

// LoopsOverMessageContent follows vLLM's _detect_content_format: loops over
// message content, message coming from a loop over messages (or a variable
// set from messages, possibly sliced or filtered); sets from a message are
// not followed; a tuple loop target over messages ends the search.
func TestLoopsOverMessageContent(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"{% for m in messages %}{% for c in m['content'] %}{{ c.text }}{% endfor %}{% endfor %}", true},
		{"{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for c in m.content %}{% endfor %}{% endif %}{% endfor %}", true},
		{"{% set msgs = messages[1:] %}{% set rest = msgs %}{% for m in rest %}{% for c in m.content %}{% endfor %}{% endfor %}", true},
		{"{% for m in messages|selectattr('role', 'equalto', 'user') %}{% for c in m['content'] %}{% endfor %}{% endfor %}", true},
		{"{% for m in messages if m.role != 'system' %}{% for c in m.content|list %}{% endfor %}{% endfor %}", true},
		{"{% for m in messages %}{{ m.content }}{% endfor %}", false},
		{"{% for m in messages %}{% set c = m.content %}{% for x in c %}{% endfor %}{% endfor %}", false},
		{"{% for m in messages %}{% for c in m.tool_calls %}{% endfor %}{% endfor %}", false},
		{"{% for m in messages %}{% for c in messages[0].content %}{% endfor %}{% endfor %}", false},
		{"{% for i, m in messages %}{% endfor %}{% for m in messages %}{% for c in m.content %}{% endfor %}{% endfor %}", false},
		{"{% macro f(ms) %}{% for m in messages %}{% for c in m.content %}{% endfor %}{% endfor %}{% endmacro %}", true},
	} {
		tmpl, err := Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := tmpl.LoopsOverMessageContent(); got != c.want {
			t.Errorf("%s: got %v, want %v", c.src, got, c.want)
		}
	}
}
