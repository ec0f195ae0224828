package sched_test

import (
	"fmt"
	"testing"

	"govllm/internal/sched"
)

// FuzzScheduler drives a small scheduler with arbitrary add / step / abort
// sequences. The fake executor checks every attended KV slot, the harness
// checks every plan and the invariants after every step, and the run must
// drain to all blocks free with zero gauges.
func FuzzScheduler(f *testing.F) {
	f.Add([]byte{0, 10, 20, 1, 1, 0, 3, 5, 1, 2, 0, 1, 1, 1})
	f.Add([]byte{0, 40, 7, 0, 41, 9, 0, 42, 3, 1, 1, 1, 2, 1, 1, 1})
	f.Add([]byte{0, 200, 255, 0, 201, 255, 0, 202, 255, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		for _, policy := range []sched.Policy{sched.FCFS, sched.Priority} {
			o := defaultOpts()
			o.kv.NumBlocks = 12
			o.sched.MaxModelLen = 48
			o.sched.MaxNumBatchedTokens = 16
			o.sched.MaxNumSeqs = 4
			o.sched.Policy = policy
			o.sched.LongPrefillTokenThreshold = 0
			h := newHarness(t, o)
			n := 0
			for i := 0; i < len(data); i++ {
				switch data[i] % 3 {
				case 0: // add: prompt length and max tokens from the next bytes
					if i+2 >= len(data) {
						break
					}
					plen := 1 + int(data[i+1])%40
					maxTok := 1 + int(data[i+2])%(47-plen+1)
					base := int(data[i+1]) % 3 * 100 // shared prefixes
					h.addReq(sched.EngineRequest{
						ID:             sched.RequestID(fmt.Sprint("r", n)),
						PromptTokenIDs: prompt(base, plen),
						Params:         params(min(maxTok, 48-plen)),
						EOSTokenID:     -1,
						Priority:       int(data[i+2]) % 3,
					})
					n++
					i += 2
				case 1:
					h.step()
				case 2:
					if i+1 < len(data) && n > 0 {
						h.s.Abort(sched.RequestID(fmt.Sprint("r", int(data[i+1])%n)))
						i++
					}
				}
			}
			h.run()
			h.checkDrained()
		}
	})
}
