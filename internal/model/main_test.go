package model

import (
	"testing"

	"go.uber.org/goleak"
)

// NewDummy fills weights on worker goroutines and tests start tensor.Pools:
// none may outlive its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
