package tensor

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestB32PackGenerated: the generated kernels and their declarations are
// what b32pack_gen.go and ktile_gen.go write now (run go generate after
// changing them).
func TestB32PackGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	gen := []string{"b32pack_gen.go", "ktile_gen.go"}
	for _, f := range gen {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, append([]string{"run"}, gen...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run %v: %v\n%s", gen, err, out)
	}
	for _, f := range []string{"b32pack_amd64.s", "b32pack_asm_amd64.go", "ktile_amd64.s", "ktile_asm_amd64.go"} {
		want, err1 := os.ReadFile(filepath.Join(dir, f))
		got, err2 := os.ReadFile(f)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./internal/tensor", f)
		}
	}
}
