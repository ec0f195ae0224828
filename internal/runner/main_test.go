package runner

import (
	"testing"

	"go.uber.org/goleak"
)

// The pool starts worker goroutines; every test must close its pools.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
