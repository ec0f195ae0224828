package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImports enforces the runner's place in the picture: it may use the
// model, tensor kernels, sampling and the scheduler's wire types, but never
// HTTP, Prometheus, the tokenizer, or the layers above it; and sampling is a
// leaf that imports nothing internal.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{"govllm/internal/runner", []string{
			"net/http", "github.com/prometheus/", "govllm/internal/tokenizer", "govllm/internal/core",
			"govllm/internal/output", "govllm/internal/llm", "govllm/internal/httpapi", "govllm/internal/metrics",
		}},
		{"govllm/internal/sampling", []string{"govllm/"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", tt.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tt.pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range tt.forbidden {
					if strings.HasPrefix(dep, f) && dep != tt.pkg {
						t.Errorf("%s depends on %s", tt.pkg, dep)
					}
				}
			}
		})
	}
}

// TestNoEnvironmentReads: flags and environment are read only in cmd/govllm.
func TestNoEnvironmentReads(t *testing.T) {
	for _, dir := range []string{".", "../sampling"} {
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
