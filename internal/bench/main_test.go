package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// Run starts a goroutine per request and an HTTP transport: nothing may
// outlive it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
