package core

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineImports enforces the import rules of the engine packages this
// one is built from: no HTTP, no Prometheus, no tokenizer, no runner (core
// consumes the Executor interface instead), no model.
func TestEngineImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	forbidden := []string{
		"net/http",
		"github.com/prometheus/",
		"govllm/internal/tokenizer",
		"govllm/internal/runner",
		"govllm/internal/model",
		"govllm/internal/httpapi",
		"govllm/internal/metrics",
	}
	for _, pkg := range []string{"govllm/internal/kvcache", "govllm/internal/sched", "govllm/internal/core"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestNoEnvironmentReads: flags and environment are read only in cmd/govllm.
func TestNoEnvironmentReads(t *testing.T) {
	for _, dir := range []string{"../kvcache", "../sched", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"os.Getenv", "os.LookupEnv", "os.Environ", "flag."} {
				if strings.Contains(string(src), bad) {
					t.Errorf("%s uses %s", f, bad)
				}
			}
		}
	}
}
