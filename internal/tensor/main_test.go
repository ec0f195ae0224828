package tensor

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// eachImpl runs f once per kernel level this CPU supports.
func eachImpl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, k := range allImpls() {
		t.Run(k.name, func(t *testing.T) {
			saved := impl
			impl = k
			defer func() { impl = saved }()
			f(t)
		})
	}
}
