package sched_test

import (
	"context"

	"govllm/internal/sched"
)

// scriptExec samples each request's next scripted token.
type scriptExec map[sched.RequestID][]int32

func (s scriptExec) Execute(_ context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	ro := &sched.RunnerOutput{}
	for _, r := range so.Requests {
		tok := int32(-1)
		if r.Sample {
			tok = s[r.ID][len(r.OutputTokenIDs)]
		}
		ro.SampledTokenIDs = append(ro.SampledTokenIDs, tok)
	}
	return ro, nil
}
