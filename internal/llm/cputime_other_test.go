//go:build !unix

package llm

import "time"

func cpuTime() time.Duration { return 0 }
