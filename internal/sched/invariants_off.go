//go:build !invariants

package sched

const invariantsEnabled = false
