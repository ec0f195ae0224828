// Package archtest holds only tests: they hold the import rules of
// docs/architecture.md against the code, so `go test ./...` fails when the
// picture and the code disagree.
package archtest
