// Package testmodels finds the shared test models (../shared/models next to
// the repository) for tests. It is imported only from _test files.
package testmodels

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared/models/<name>, searching upward
// from the working directory. When the shared folder is absent the test is
// skipped with a loud message; CI always has it.
func Dir(tb testing.TB, name string) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "models", name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		p = filepath.Join(d, "..", "shared", "models", name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return filepath.Clean(p)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	tb.Skipf("SKIPPING: shared model %q not found (looked for ../shared/models/%s above %s); CI provides it", name, name, wd)
	return ""
}
