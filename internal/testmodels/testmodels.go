// Package testmodels finds the shared test models (../shared/models next to
// the repository) and other shared test data (../shared/structured) for
// tests. It is imported only from _test files.
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
	return Shared(tb, filepath.Join("models", name))
}

// Shared returns the absolute path of ../shared/<rel> (a file or folder,
// e.g. "structured/maskbench-dev.jsonl"), looking upward from the working
// directory, and skips the test loudly when it is absent.
func Shared(tb testing.TB, rel string) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, p := range []string{filepath.Join(d, "shared", rel), filepath.Join(d, "..", "shared", rel)} {
			if _, err := os.Stat(p); err == nil {
				return filepath.Clean(p)
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	tb.Skipf("SKIPPING: shared data %q not found (looked for ../shared/%s above %s); CI provides it", rel, rel, wd)
	return ""
}
