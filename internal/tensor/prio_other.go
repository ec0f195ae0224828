//go:build !linux

package tensor

func threadID() int { return 0 }

func lowerThreadPriority(delta int) (int, error) { return 0, ErrNiceUnsupported }

func osYield() {}
