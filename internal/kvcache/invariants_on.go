//go:build invariants

package kvcache

// invariantsEnabled: built with -tags invariants, mutating methods verify
// every invariant and panic on a violation.
const invariantsEnabled = true
