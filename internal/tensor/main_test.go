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

// q4TestLevels are levels besides allImpls that the Q4_0 tests run: those
// this CPU can run but not select (kernels_amd64_test.go adds the avx512
// level without VBMI).
var q4TestLevels []*kernels

// eachQ4Impl is eachImpl over allImpls and q4TestLevels.
func eachQ4Impl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	eachImpl(t, f)
	for _, k := range q4TestLevels {
		t.Run(k.name+"-q4p="+map[bool]string{false: "off", true: "on"}[k.q4p], func(t *testing.T) {
			saved := impl
			impl = k
			defer func() { impl = saved }()
			f(t)
		})
	}
}
