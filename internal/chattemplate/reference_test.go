package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"govllm/internal/testmodels"
)

// refCase is one rendering compared byte for byte with @huggingface/jinja.
type refCase struct {
	name      string
	template  string
	bos, eos  string
	msgs      []Message
	genPrompt bool
}

var conversations = []struct {
	name string
	msgs []Message
}{
	{"user", []Message{{"user", "Hello!"}}},
	{"system-user", []Message{{"system", "You are a pirate."}, {"user", "Where is the treasure?"}}},
	{"multi-turn", []Message{
		{"system", "  Be brief.\n"},
		{"user", "What is 2+2?"},
		{"assistant", " 4 "},
		{"user", "And in French? «quatre» — ünïcode ✓\nnew line"},
	}},
	{"user-assistant", []Message{{"user", "Say hi"}, {"assistant", "hi"}}},
	{"roles-not-alternating", []Message{{"user", "a"}, {"user", "b"}}},
	{"quotes-and-braces", []Message{{"user", `{{ not a tag }} {% nope %} "quoted" 'single' \n backslash`}}},
}

func loadTemplates(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/templates/*.jinja")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

func referenceCases(t *testing.T) []refCase {
	templates := loadTemplates(t)
	names := make([]string, 0, len(templates))
	for n := range templates {
		names = append(names, n)
	}
	sort.Strings(names)
	var cases []refCase
	add := func(tname, src, bos, eos string) {
		for _, conv := range conversations {
			for _, gen := range []bool{true, false} {
				name := tname + "/" + conv.name
				if !gen {
					name += "/no-gen-prompt"
				}
				cases = append(cases, refCase{name, src, bos, eos, conv.msgs, gen})
			}
		}
	}
	for _, n := range names {
		bos, eos := "<s>", "</s>"
		if n == "llama3.jinja" || n == "llama3.2.jinja" {
			bos, eos = "<|begin_of_text|>", "<|eot_id|>"
		}
		add(n, templates[n], bos, eos)
	}
	add("default", Default, "<s>", "</s>")
	// The template shipped with the stories260K-hf test model.
	dir := testmodels.Dir(t, "stories260K-hf")
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.ChatTemplate == "" {
		t.Fatalf("stories260K-hf chat_template: %v", err)
	}
	add("stories260K-hf", cfg.ChatTemplate, "<s>", "</s>")
	return cases
}

// dateString pins Llama 3.2's "Today Date" so both renderers agree.
const dateString = "26 Jul 2024"

// TestMatchesHuggingFaceJinja renders real chat templates over several
// conversations and compares byte for byte with @huggingface/jinja (the
// renderer of transformers.js), run under node from testdata/npm.
func TestMatchesHuggingFaceJinja(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPING reference comparison: node is not installed")
	}
	if _, err := os.Stat("testdata/npm/node_modules/@huggingface/jinja"); err != nil {
		t.Skip("SKIPPING reference comparison: run `npm ci` in internal/chattemplate/testdata/npm first (CI does)")
	}
	cases := referenceCases(t)
	type jsCase struct {
		Template string         `json:"template"`
		Context  map[string]any `json:"context"`
	}
	in := make([]jsCase, len(cases))
	for i, c := range cases {
		msgs := make([]map[string]string, len(c.msgs))
		for j, m := range c.msgs {
			msgs[j] = map[string]string{"role": m.Role, "content": m.Content}
		}
		in[i] = jsCase{c.template, map[string]any{
			"messages": msgs, "add_generation_prompt": c.genPrompt,
			"bos_token": c.bos, "eos_token": c.eos, "date_string": dateString,
		}}
	}
	body, _ := json.Marshal(in)
	cmd := exec.Command(node, "render.mjs")
	cmd.Dir = "testdata/npm"
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node render.mjs: %v\n%s", err, stderr.String())
	}
	var want []struct {
		Out *string `json:"out"`
		Err *string `json:"err"`
	}
	if err := json.Unmarshal(outb, &want); err != nil || len(want) != len(cases) {
		t.Fatalf("node output: %v (%d results for %d cases)", err, len(want), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := New(c.template, c.bos, c.eos)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Render(c.msgs, Options{AddGenerationPrompt: c.genPrompt, Kwargs: map[string]any{"date_string": dateString}})
			w := want[i]
			switch {
			case w.Err != nil && err == nil:
				t.Fatalf("reference raised %q; Go rendered %q", *w.Err, got)
			case w.Err != nil:
				if !errors.Is(err, ErrTemplate) {
					t.Fatalf("reference raised %q; Go failed with a non-template error: %v", *w.Err, err)
				}
			case err != nil:
				t.Fatalf("Go failed: %v; reference rendered %q", err, *w.Out)
			case got != *w.Out:
				t.Fatalf("mismatch\n got: %q\nwant: %q", got, *w.Out)
			}
		})
	}
}
