package tensor

import (
	"os/exec"
	"testing"
)

// TestPureGoBuildVets vets the package as built with the purego tag (the
// portable build every non-amd64 machine gets), whose kernels the other
// tests run through the "go" level but whose file set only that tag builds.
func TestPureGoBuildVets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(gobin, "vet", "-tags", "purego", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go vet -tags purego: %v\n%s", err, out)
	}
}
