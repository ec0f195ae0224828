package archtest

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "govllm/"

type pkg struct {
	Name       string
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// list runs `go list -deps=false -json` over the module's packages.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	readSources(t)
	cmd := exec.Command("go", "list", "-json", "govllm/...")
	cmd.Dir = "../.."
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, mod)] = p
	}
	return pkgs
}

// readSources reads every Go file of the module. `go list` runs in a
// subprocess whose reads the test cache cannot see; reading the files here
// makes a cached pass invalid as soon as any source file changes.
func readSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err := os.ReadFile(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	// engine packages see token ids only, and never serve, export metrics
	// or read the environment.
	engine = []string{"internal/kvcache", "internal/sched", "internal/runner", "internal/core", "internal/model"}
	// leaves import nothing internal (format parsers are leaves too).
	leaves = map[string][]string{
		"internal/apierr":      nil,
		"internal/sampling":    {"internal/apierr"},
		"internal/stats":       nil,
		"internal/pooling":     nil,
		"internal/tensor":      nil,
		"internal/gguf":        nil,
		"internal/safetensors": nil,
		"internal/tokenizer":   {"internal/gguf"},
		"internal/constraint":  {"internal/tokenizer"},
		"internal/toolparser":  nil,
		"internal/reasoning":   nil,
		"internal/webui":       nil,
	}
	forbiddenForEngine = []string{"net/http", "github.com/prometheus/", mod + "internal/tokenizer", mod + "internal/metrics",
		mod + "internal/httpapi", mod + "internal/llm", mod + "internal/output", mod + "internal/openai", mod + "internal/bench"}
	// layering inside the engine: the scheduling side never sees the model,
	// and the runner never sees the core that drives it.
	layering = map[string][]string{
		"internal/kvcache": {"internal/sched", "internal/core", "internal/model", "internal/runner"},
		"internal/sched":   {"internal/core", "internal/model", "internal/runner"},
		"internal/core":    {"internal/model", "internal/runner"},
		"internal/runner":  {"internal/core"},
		"internal/output":  {"internal/llm", "internal/httpapi"},
		"internal/llm":     {"internal/httpapi", "internal/metrics"},
		"internal/httpapi": {"internal/webui"}, // the page is injected (Config.UI)
	}
	// only these may import the Prometheus client library; the bench client
	// may parse the text exposition format (prometheus/common/expfmt and its
	// client_model types).
	prometheusUsers = []string{"internal/metrics", "cmd/govllm"}
	expfmtUsers     = []string{"internal/bench"}
)

func TestEngineImports(t *testing.T) {
	pkgs := list(t)
	for _, name := range engine {
		p, ok := pkgs[name]
		if !ok {
			t.Errorf("engine package %s is missing: update the rules with the picture", name)
			continue
		}
		for _, dep := range p.Deps {
			for _, bad := range forbiddenForEngine {
				if dep == bad || strings.HasPrefix(dep, bad) && strings.HasSuffix(bad, "/") {
					t.Errorf("%s depends on %s (engine packages must not)", name, dep)
				}
			}
		}
	}
	for name, banned := range layering {
		p, ok := pkgs[name]
		if !ok {
			t.Errorf("package %s is missing: update the rules with the picture", name)
			continue
		}
		for _, b := range banned {
			if slices.Contains(p.Deps, mod+b) {
				t.Errorf("%s depends on %s (core defines the Executor interface; cmd/govllm wires the runner in)", name, b)
			}
		}
	}
}

func TestLeavesImportNothingInternal(t *testing.T) {
	pkgs := list(t)
	for name, allowed := range leaves {
		p, ok := pkgs[name]
		if !ok {
			t.Errorf("leaf package %s is missing: update the rules with the picture", name)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			if !slices.Contains(allowed, strings.TrimPrefix(imp, mod)) {
				t.Errorf("leaf %s imports %s", name, imp)
			}
		}
	}
}

func TestOnlyMetricsAndCmdImportPrometheus(t *testing.T) {
	for name, p := range list(t) {
		if slices.Contains(prometheusUsers, name) {
			continue
		}
		for _, imp := range p.Imports {
			parsing := strings.HasPrefix(imp, "github.com/prometheus/common/") || strings.HasPrefix(imp, "github.com/prometheus/client_model/")
			if parsing && slices.Contains(expfmtUsers, name) {
				continue
			}
			if strings.HasPrefix(imp, "github.com/prometheus/") {
				t.Errorf("%s imports %s; only %v may (others receive an http.Handler or a StatLogger)", name, imp, prometheusUsers)
			}
		}
	}
}

// TestLibrariesDoNotReadEnvironment: flags and environment are read only in cmd.
func TestLibrariesDoNotReadEnvironment(t *testing.T) {
	envFuncs := []string{"Getenv", "LookupEnv", "Environ", "ExpandEnv"}
	fset := token.NewFileSet()
	for name, p := range list(t) {
		if strings.HasPrefix(name, "cmd/") || p.Name == "main" {
			continue // commands (cmd/govllm, the scripts' helpers) read flags and the environment
		}
		if slices.Contains(p.Imports, "flag") {
			t.Errorf("%s imports flag: flags are parsed only in cmd/govllm", name)
		}
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && slices.Contains(envFuncs, sel.Sel.Name) {
					t.Errorf("%s: os.%s in library code (read the environment only in cmd/govllm)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
}
