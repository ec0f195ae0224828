package chattemplate

import (
	"os"
	"testing"
)

// BenchmarkRender renders a four-message conversation with real templates.
func BenchmarkRender(b *testing.B) {
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "What is 2+2?"}, {Role: "assistant", Content: "4"}, {Role: "user", Content: "And 3+3?"}}
	for _, name := range []string{"llama3.jinja", "llama3.2.jinja", "zephyr-tinyllama.jinja", "chatml-smollm2.jinja"} {
		src, err := os.ReadFile("testdata/templates/" + name)
		if err != nil {
			b.Fatal(err)
		}
		tmpl, err := New(string(src), "<s>", "</s>")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tmpl.Render(msgs, Options{AddGenerationPrompt: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
