package testmodels

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadGoldenRejectsMalformedFiles(t *testing.T) {
	for _, tc := range []struct{ name, ids, want string }{
		{"one column", "1 403\n403\n", "want two ids"},
		{"not a number", "1 x\n", "bad ids"},
		{"shorter than the prompt", "1 403\n403 407\n", "shorter than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "once_upon_a_time.prompt"), []byte("Once upon a time\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "once_upon_a_time.ids"), []byte(tc.ids), 0o644)
			if _, err := readGolden(dir, "once_upon_a_time"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadGolden(t *testing.T) {
	for _, name := range GoldenNames {
		g := LoadGolden(t, name)
		if g.PromptIDs()[0] != 1 {
			t.Errorf("%s: prompt does not start with BOS: %v", name, g.PromptIDs())
		}
		for i := 1; i < len(g.Input); i++ {
			if g.Input[i] != g.Next[i-1] {
				t.Fatalf("%s: step %d input %d is not the previous step's next %d", name, i, g.Input[i], g.Next[i-1])
			}
		}
		if len(g.Continuation()) != len(g.Input)-g.PromptLen+1 {
			t.Errorf("%s: continuation of %d tokens", name, len(g.Continuation()))
		}
	}
}
