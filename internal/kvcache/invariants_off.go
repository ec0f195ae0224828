//go:build !invariants

package kvcache

const invariantsEnabled = false
