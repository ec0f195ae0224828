package chattemplate

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"govllm/internal/jsonvalue"
)

// readTemplate reads testdata/templates/name (a missing file must not
// silently select Default).
func readTemplate(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("testdata/templates/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestDefaultTemplate(t *testing.T) {
	tmpl, err := New("", "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}, Options{AddGenerationPrompt: true})
	if want := "<s>system: S\nuser: U\nassistant:"; err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func TestStrftimeNowAndKwargs(t *testing.T) {
	src, err := os.ReadFile("testdata/templates/llama3.2.jinja")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := New(string(src), "<|begin_of_text|>", "<|eot_id|>")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.now = func() time.Time { return time.Date(2025, time.March, 7, 12, 0, 0, 0, time.UTC) }
	got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{AddGenerationPrompt: true})
	if err != nil || !strings.Contains(got, "Today Date: 07 Mar 2025\n") {
		t.Fatalf("strftime_now not used: %q, %v", got, err)
	}
	got, err = tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{Kwargs: map[string]any{"date_string": "1 Jan 2000"}})
	if err != nil || !strings.Contains(got, "Today Date: 1 Jan 2000\n") || strings.HasSuffix(got, "<|end_header_id|>\n\n") {
		t.Fatalf("kwargs: %q, %v", got, err)
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2024, time.July, 6, 15, 4, 5, 0, time.UTC)
	for format, want := range map[string]string{
		"%d %b %Y":   "06 Jul 2024",
		"%Y-%m-%d":   "2024-07-06",
		"%A %B %y":   "Saturday July 24",
		"%H:%M:%S%p": "15:04:05PM",
		"%j %% %q":   "188 % %q",
	} {
		if got := Strftime(tm, format); got != want {
			t.Errorf("Strftime(%q) = %q, want %q", format, got, want)
		}
	}
}

func TestRaiseExceptionIsTyped(t *testing.T) {
	tmpl, err := New(readTemplate(t, "mistral-v0.2.jinja"), "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render([]Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}, Options{})
	if !errors.Is(err, ErrTemplate) || !strings.HasSuffix(err.Error(), ": Conversation roles must alternate user/assistant/user/assistant/...") {
		t.Fatalf("err = %v", err)
	}
	if _, err := New("{% for %}", "", ""); err == nil {
		t.Fatal("bad template compiled")
	}
}

func TestConcurrentRender(t *testing.T) {
	tmpl, err := New(readTemplate(t, "llama2.jinja"), "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := []Message{{Role: "user", Content: "x"}}
			if i%2 == 1 {
				msgs = append(msgs, Message{Role: "user", Content: "y"}) // raises
			}
			_, err := tmpl.Render(msgs, Options{})
			if (err != nil) != (i%2 == 1) {
				t.Errorf("render %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
}

// chat_template_kwargs objects keep the client's key order, as Python dicts
// do: {{ cfg|tojson }} prints json.dumps(cfg) of the insertion-ordered dict.
func TestKwargsKeepKeyOrder(t *testing.T) {
	tmpl, err := New("{{ cfg|tojson }}|{% for k, v in cfg.items() %}{{ k }}{% endfor %}", "", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jsonvalue.Parse([]byte(`{"zeta": 1, "alpha": {"y": true, "b": null}, "mid": [2, "x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{Kwargs: map[string]any{"cfg": cfg}})
	if want := `{"zeta": 1, "alpha": {"y": true, "b": null}, "mid": [2, "x"]}|zetaalphamid`; err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}
