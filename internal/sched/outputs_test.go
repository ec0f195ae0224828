package sched_test

import (
	"context"
	"slices"
	"testing"

	"govllm/internal/sampling"
	"govllm/internal/sched"
)

// logprobExec samples token 7 and reports a logprob for requests that ask.
type logprobExec struct{}

func (logprobExec) Execute(_ context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	ro := &sched.RunnerOutput{Logprobs: make([]*sampling.Logprobs, len(so.Requests))}
	for i, r := range so.Requests {
		tok := int32(-1)
		if r.Sample {
			tok = 7
			if r.Params.Logprobs != nil {
				ro.Logprobs[i] = &sampling.Logprobs{Sampled: sampling.TokenLogprob{Token: 7, Logprob: -0.5}, Rank: 1}
			}
		}
		ro.SampledTokenIDs = append(ro.SampledTokenIDs, tok)
	}
	return ro, nil
}

func TestLogprobsPassThrough(t *testing.T) {
	o := defaultOpts()
	o.exec = logprobExec{}
	h := newHarness(t, o)
	two := 2
	p := params(2)
	p.Logprobs = &two
	h.addReq(sched.EngineRequest{ID: "lp", PromptTokenIDs: prompt(0, 3), Params: p, EOSTokenID: -1})
	h.add("plain", prompt(0, 3), 2)
	_, outs := h.step()
	for _, o := range outs.Outputs {
		switch o.ReqID {
		case "lp":
			if len(o.NewLogprobs) != 1 || o.NewLogprobs[0].Sampled.Token != 7 {
				t.Fatalf("lp logprobs %+v", o.NewLogprobs)
			}
		case "plain":
			if o.NewLogprobs != nil {
				t.Fatalf("plain got logprobs %+v", o.NewLogprobs)
			}
		}
	}
	h.run()
	h.checkDrained()
}

// TestStopCheck: a step that gave a token to an unfinished request with
// stop strings says so (CoreOutputs.StopCheck), because only the front end
// can tell whether that token completed a stop string, and the core must
// hear its answer before scheduling the request again; once the front end
// aborts it, the next step does not schedule it.
func TestStopCheck(t *testing.T) {
	withStop := func(id string, n, maxTokens, minTokens int) sched.EngineRequest {
		p := params(maxTokens)
		p.Stop = []string{"x"}
		p.MinTokens = minTokens
		return sched.EngineRequest{ID: sched.RequestID(id), PromptTokenIDs: prompt(0, n), Params: p, EOSTokenID: -1}
	}
	plain := sched.EngineRequest{ID: "p", PromptTokenIDs: prompt(50, 3), Params: params(5), EOSTokenID: -1}
	tests := []struct {
		name     string
		reqs     []sched.EngineRequest
		want     bool
		nextPlan string // after the front end aborts "s"
	}{
		{name: "stop strings, running", reqs: []sched.EngineRequest{withStop("s", 3, 5, 0), plain}, want: true, nextPlan: "p:3+1*"},
		{name: "no stop strings", reqs: []sched.EngineRequest{plain}, want: false, nextPlan: "p:3+1*"},
		{name: "stop strings, finished by length", reqs: []sched.EngineRequest{withStop("s", 3, 1, 0)}, want: false, nextPlan: ""},
		{name: "stop strings, partial prefill", reqs: []sched.EngineRequest{withStop("s", 40, 5, 0)}, want: false, nextPlan: ""},
		// The front end matches stop strings only after min_tokens.
		{name: "stop strings, within min_tokens", reqs: []sched.EngineRequest{withStop("s", 3, 5, 1)}, want: false, nextPlan: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOpts()
			o.sched.MaxNumBatchedTokens = 16
			h := newHarness(t, o)
			for _, r := range tt.reqs {
				h.addReq(r)
			}
			if _, outs := h.step(); outs.StopCheck != tt.want {
				t.Fatalf("StopCheck %v, want %v (outputs %+v)", outs.StopCheck, tt.want, outs.Outputs)
			}
			h.s.Abort("s")
			if plan, _ := h.step(); plan != tt.nextPlan {
				t.Fatalf("next plan %q, want %q", plan, tt.nextPlan)
			}
			h.run()
			h.checkDrained()
		})
	}
}

// promptLogprobExec is logprobExec that also scores every position of a
// request's prompt-logprobs range with the prompt token after it.
type promptLogprobExec struct{ logprobExec }

func (e promptLogprobExec) Execute(ctx context.Context, so *sched.SchedulerOutput) (*sched.RunnerOutput, error) {
	ro, _ := e.logprobExec.Execute(ctx, so)
	for i, r := range so.Requests {
		for p := r.PromptLogprobsStart; p < r.PromptLogprobsEnd; p++ {
			if ro.PromptLogprobs == nil {
				ro.PromptLogprobs = make([][]*sampling.Logprobs, len(so.Requests))
			}
			ro.PromptLogprobs[i] = append(ro.PromptLogprobs[i], &sampling.Logprobs{Sampled: sampling.TokenLogprob{Token: r.PromptTokenIDs[p+1]}})
		}
	}
	return ro, nil
}

// TestPromptLogprobsAcrossChunks: a request asking for prompt logprobs is
// prefilled in 4-token chunks without prefix-cache hits (its prompt is
// cached by an earlier request), each chunk scores the prompt tokens after
// its positions, and the first output carries all of them, once.
func TestPromptLogprobsAcrossChunks(t *testing.T) {
	o := defaultOpts()
	o.exec = promptLogprobExec{}
	o.sched.MaxNumBatchedTokens, o.sched.MaxNumSeqs = 4, 4
	h := newHarness(t, o)
	h.add("warm", prompt(0, 10), 1)
	h.run()
	one := 1
	p := params(2)
	p.PromptLogprobs = &one
	h.addReq(sched.EngineRequest{ID: "pl", PromptTokenIDs: prompt(0, 10), Params: p, EOSTokenID: -1})
	var got [][]*sampling.Logprobs
	var plans []string
	for h.s.HasRequests() {
		plan, outs := h.step()
		plans = append(plans, plan)
		for _, o := range outs.Outputs {
			got = append(got, o.PromptLogprobs)
		}
	}
	if want := []string{"pl:0+4", "pl:4+4", "pl:8+2*", "pl:10+1*"}; !slices.Equal(plans, want) {
		t.Fatalf("plans %q, want %q (no prefix-cache hit)", plans, want)
	}
	if len(got) != 2 || len(got[0]) != 9 || got[1] != nil {
		t.Fatalf("prompt logprobs per output: %v, want 9 on the first and none after", got)
	}
	for j, lp := range got[0] {
		if lp.Sampled.Token != prompt(0, 10)[j+1] {
			t.Fatalf("entry %d scores token %d, want prompt token %d", j, lp.Sampled.Token, prompt(0, 10)[j+1])
		}
	}
	if st := h.prefill["pl"]; st == nil || st.NumCachedTokens != 0 {
		t.Fatalf("prefill stats %+v, want no cached tokens", st)
	}
}
