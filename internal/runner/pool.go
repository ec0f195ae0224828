package runner

import "govllm/internal/sched"

// hiddenBuffer returns room for the final hidden states of every
// embedding or prompt-logprobs request's tokens of the step (nil when
// there is none).
func (r *Runner) hiddenBuffer(so *sched.SchedulerOutput) []float32 {
	n := 0
	for i := range so.Requests {
		if sr := &so.Requests[i]; sr.Pool != nil || sr.PromptLogprobsEnd > sr.PromptLogprobsStart {
			n += len(so.Requests[i].TokenIDs)
		}
	}
	n *= r.m.Config.Dim
	if n == 0 {
		return nil
	}
	if cap(r.hidden) < n {
		r.hidden = make([]float32, n)
	}
	return r.hidden[:n]
}

// poolOutputs hands each embedding request's hidden states of the step to its
// accumulator, in token order, and returns the pooled vector of those
// whose prompt is now complete (vLLM's pooler output). Nothing of theirs
// is sampled.
func (r *Runner) poolOutputs(so *sched.SchedulerOutput, out *sched.RunnerOutput) {
	dim := r.m.Config.Dim
	for i := range so.Requests {
		req := &so.Requests[i]
		if req.Pool == nil {
			continue
		}
		req.Pool.Add(req.Start, r.batch.Seqs[i].Hidden, dim)
		if req.Sample {
			if out.Pooled == nil {
				out.Pooled = make([][]float32, len(so.Requests))
			}
			out.Pooled[i] = req.Pool.Result()
		}
	}
}
