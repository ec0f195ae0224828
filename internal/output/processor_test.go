package output

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

// Test vocabulary: ids 0..25 are "a".."z", 26 is " ", 27 is ".", 28 is
// "é", 29 is the (special, invisible) EOS.
const (
	tSpace = 26
	tDot   = 27
	tE     = 28
	tEOS   = 29
)

type fakeDecoder struct{}

func (fakeDecoder) Flush() string { return "" }

func (fakeDecoder) Add(id int32) string {
	switch {
	case id < 26:
		return string(rune('a' + id))
	case id == tSpace:
		return " "
	case id == tDot:
		return "."
	case id == tE:
		return "é"
	}
	return ""
}

func newTestProcessor() *Processor {
	return NewProcessor(func([]int32, *sampling.Params) Decoder { return fakeDecoder{} })
}

// ids spells s with the test vocabulary.
func ids(s string) []int32 {
	var out []int32
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			out = append(out, r-'a')
		case r == ' ':
			out = append(out, tSpace)
		case r == '.':
			out = append(out, tDot)
		case r == 'é':
			out = append(out, tE)
		}
	}
	return out
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ts(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func params(mut func(*sampling.Params)) sampling.Params {
	p := sampling.Default()
	p.MaxTokens = 100
	if mut != nil {
		mut(&p)
	}
	return p
}

// one-token-per-step outputs for text, the last one carrying finish.
func tokenSteps(id sched.RequestID, text string, finish stats.FinishReason, stop int32) []sched.CoreOutput {
	var outs []sched.CoreOutput
	for i, tok := range ids(text) {
		o := sched.CoreOutput{ReqID: id, NewTokenIDs: []int32{tok}, StopReason: -1}
		if i == 0 {
			o.Events = []stats.Event{{Type: stats.EventQueued, Time: ts(1)}, {Type: stats.EventScheduled, Time: ts(2)}}
			ps := stats.NewPrefillStats(3, 0)
			o.PrefillStats = &ps
		}
		outs = append(outs, o)
	}
	outs[len(outs)-1].FinishReason = finish
	outs[len(outs)-1].StopReason = stop
	return outs
}

func TestProcessorStopStringsAndStreaming(t *testing.T) {
	cases := []struct {
		name      string
		params    sampling.Params
		gen       string // tokens the core produces, one per step
		coreStop  stats.FinishReason
		coreToken int32 // core stop token appended at the end (or -1)
		wantText  string
		wantFin   stats.FinishReason
		wantStop  any
		abortStep int // step (0-based) whose stop string must abort the core request; -1 none
	}{
		{"length, no stop strings", params(nil), "hello world", stats.FinishLength, -1, "hello world", stats.FinishLength, nil, -1},
		{"stop string truncates", params(func(p *sampling.Params) { p.Stop = []string{"wor"} }), "hello world", stats.FinishNone, -1, "hello ", stats.FinishStop, "wor", 8},
		{"stop string included", params(func(p *sampling.Params) { p.Stop = []string{"wor"}; p.IncludeStopStrInOutput = true }), "hello world", stats.FinishNone, -1, "hello wor", stats.FinishStop, "wor", 8},
		{"partial prefix that never completes is released", params(func(p *sampling.Params) { p.Stop = []string{"lox"} }), "hello", stats.FinishLength, -1, "hello", stats.FinishLength, nil, -1},
		{"first listed stop string wins", params(func(p *sampling.Params) { p.Stop = []string{"zz", "l"} }), "hello", stats.FinishNone, -1, "he", stats.FinishStop, "l", 2},
		{"min_tokens delays stop strings", params(func(p *sampling.Params) { p.Stop = []string{"l"}; p.MinTokens = 3 }), "hello", stats.FinishNone, -1, "hel", stats.FinishStop, "l", 3},
		{"stop string on the core's last token turns length into stop", params(func(p *sampling.Params) { p.Stop = []string{"lo"} }), "hello", stats.FinishLength, -1, "hel", stats.FinishStop, "lo", -1},
		{"stop token: its text is dropped, the id is the stop reason", params(nil), "hi", stats.FinishStop, tEOS, "hi", stats.FinishStop, int32(tEOS), -1},
		{"multi-byte text", params(func(p *sampling.Params) { p.Stop = []string{"é."} }), "café.x", stats.FinishNone, -1, "caf", stats.FinishStop, "é.", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newTestProcessor()
			if _, err := p.AddRequest(Request{ID: "r", PromptTokenIDs: []int32{1, 2, 3}, Params: c.params, Kind: Delta, ArrivalTime: ts(0)}); err != nil {
				t.Fatal(err)
			}
			steps := tokenSteps("r", c.gen, c.coreStop, c.coreToken)
			if c.coreToken >= 0 {
				steps[len(steps)-1].FinishReason = stats.FinishNone
				steps = append(steps, sched.CoreOutput{ReqID: "r", NewTokenIDs: []int32{c.coreToken}, FinishReason: c.coreStop, StopReason: c.coreToken})
			}
			var streamed strings.Builder
			var last CompletionOutput
			var gotIDs []int32
			abortStep := -1
			for i, o := range steps {
				outs, aborts := p.Process(&sched.CoreOutputs{Outputs: []sched.CoreOutput{o}, Timestamp: ts(10 + i)}, stats.NewIterationStats(ts(10+i)))
				if len(aborts) > 0 {
					if !slices.Equal(aborts, []sched.RequestID{"r"}) || abortStep >= 0 {
						t.Fatalf("step %d: aborts %v", i, aborts)
					}
					abortStep = i
				}
				if len(outs) == 0 {
					if p.HasUnfinished() {
						t.Fatalf("step %d: no output for a live delta request", i)
					}
					continue // already finished: later outputs are skipped
				}
				last = outs[0].Outputs[0]
				streamed.WriteString(last.Text)
				gotIDs = append(gotIDs, last.TokenIDs...)
				if !strings.HasPrefix(c.wantText, streamed.String()) {
					t.Fatalf("step %d: streamed %q, which the final text %q does not start with", i, streamed.String(), c.wantText)
				}
				if outs[0].Finished != (last.FinishReason != stats.FinishNone) {
					t.Fatalf("step %d: Finished %v with reason %v", i, outs[0].Finished, last.FinishReason)
				}
			}
			if streamed.String() != c.wantText || last.FinishReason != c.wantFin || last.StopReason != c.wantStop {
				t.Errorf("got %q %v %v; want %q %v %v", streamed.String(), last.FinishReason, last.StopReason, c.wantText, c.wantFin, c.wantStop)
			}
			if abortStep != c.abortStep {
				t.Errorf("stop-string abort at step %d, want %d", abortStep, c.abortStep)
			}
			if p.HasUnfinished() {
				t.Errorf("request still in flight")
			}
			if want := ids(c.gen); c.abortStep < 0 && c.coreToken < 0 && !slices.Equal(gotIDs, want) {
				t.Errorf("token ids %v, want %v", gotIDs, want)
			}
		})
	}
}

func TestProcessorKindsAndParallelSampling(t *testing.T) {
	// Two sequences: "ab" then finish (length) at step 2; "xyz" finishing at step 3.
	steps := [][]sched.CoreOutput{
		{{ReqID: "p-0", NewTokenIDs: ids("a"), StopReason: -1}, {ReqID: "p-1", NewTokenIDs: ids("x"), StopReason: -1}},
		{{ReqID: "p-0", NewTokenIDs: ids("b"), FinishReason: stats.FinishLength, StopReason: -1}, {ReqID: "p-1", NewTokenIDs: ids("y"), StopReason: -1}},
		{{ReqID: "p-1", NewTokenIDs: ids("z"), FinishReason: stats.FinishLength, StopReason: -1}},
	}
	type seen struct {
		indexes  []int
		texts    []string
		finished bool
	}
	cases := []struct {
		kind Kind
		want []seen // per step; nil entry = no output
	}{
		{Delta, []seen{{[]int{0, 1}, []string{"a", "x"}, false}, {[]int{0, 1}, []string{"b", "y"}, false}, {[]int{1}, []string{"z"}, true}}},
		{Cumulative, []seen{{[]int{0, 1}, []string{"a", "x"}, false}, {[]int{0, 1}, []string{"ab", "xy"}, false}, {[]int{0, 1}, []string{"ab", "xyz"}, true}}},
		{FinalOnly, []seen{{}, {}, {[]int{0, 1}, []string{"ab", "xyz"}, true}}},
	}
	for _, c := range cases {
		t.Run(c.kind.String(), func(t *testing.T) {
			p := newTestProcessor()
			seed := int64(7)
			got, err := p.AddRequest(Request{ID: "p", PromptTokenIDs: []int32{1}, Params: params(func(p *sampling.Params) { p.N = 2; p.Seed = &seed }), Kind: c.kind, ArrivalTime: ts(0)})
			if err != nil || !slices.Equal(got, []sched.RequestID{"p-0", "p-1"}) {
				t.Fatalf("AddRequest = %v, %v", got, err)
			}
			var parents [][2]int
			var sampleIDs []string // TTFT, ITL and finished samples' request ids
			for i, step := range steps {
				it := stats.NewIterationStats(ts(i))
				outs, _ := p.Process(&sched.CoreOutputs{Outputs: step, Timestamp: ts(i)}, it)
				for k := range it.NParamsIter {
					parents = append(parents, [2]int{it.NParamsIter[k], it.MaxNumGenerationTokensIter[k]})
				}
				sampleIDs = append(sampleIDs, it.TimeToFirstTokenRequestIDs...)
				sampleIDs = append(sampleIDs, it.InterTokenLatencyRequestIDs...)
				for _, f := range it.FinishedRequests {
					sampleIDs = append(sampleIDs, f.RequestID)
				}
				w := c.want[i]
				if w.indexes == nil {
					if len(outs) != 0 {
						t.Fatalf("step %d: unexpected output %+v", i, outs[0])
					}
					continue
				}
				if len(outs) != 1 {
					t.Fatalf("step %d: %d outputs, want 1 per user request", i, len(outs))
				}
				var idx []int
				var texts []string
				for _, co := range outs[0].Outputs {
					idx = append(idx, co.Index)
					texts = append(texts, co.Text)
				}
				if outs[0].RequestID != "p" || !slices.Equal(idx, w.indexes) || !slices.Equal(texts, w.texts) || outs[0].Finished != w.finished {
					t.Errorf("step %d: got %s %v %q finished=%v; want %v %q %v", i, outs[0].RequestID, idx, texts, outs[0].Finished, w.indexes, w.texts, w.finished)
				}
			}
			if !slices.Equal(parents, [][2]int{{2, 3}}) {
				t.Errorf("parent observations (n, max gen tokens) = %v, want [[2 3]] once", parents)
			}
			// 2 TTFT + 3 ITL + 2 finished, every one named by the parent id.
			if want := slices.Repeat([]string{"p"}, 7); !slices.Equal(sampleIDs, want) {
				t.Errorf("sample request ids %q, want %q", sampleIDs, want)
			}
		})
	}
}

func TestChildParams(t *testing.T) {
	seed := int64(10)
	p := params(func(p *sampling.Params) { p.N = 3; p.Seed = &seed })
	for i := range 3 {
		c := ChildParams(p, i)
		if c.N != 1 || *c.Seed != 10+int64(i) {
			t.Errorf("child %d: n=%d seed=%d", i, c.N, *c.Seed)
		}
	}
	if *p.Seed != 10 {
		t.Errorf("parent seed changed")
	}
	if ChildParams(params(nil), 1).Seed != nil {
		t.Errorf("unseeded child got a seed")
	}
	if ChildID("x", 0, 1) != "x" || ChildID("x", 2, 3) != "x-2" {
		t.Errorf("ChildID scheme changed")
	}
}

func TestProcessorStatistics(t *testing.T) {
	p := newTestProcessor()
	for _, id := range []string{"a", "b"} {
		if _, err := p.AddRequest(Request{ID: id, PromptTokenIDs: []int32{1, 2, 3}, Params: params(func(p *sampling.Params) { p.MaxTokens = 3 }), ArrivalTime: ts(0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.AddRequest(Request{ID: "a", Params: params(nil)}); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("duplicate id: %v", err)
	}
	ev := []stats.Event{{Type: stats.EventQueued, Time: ts(1)}, {Type: stats.EventScheduled, Time: ts(2)}}
	ps := stats.NewPrefillStats(3, 1)
	// Step 1: both prefill. Step 2: a decodes, b is cancelled by its client
	// and the core reports the abort. Step 3: a finishes by length; an
	// output for an unknown id is skipped.
	steps := []sched.CoreOutputs{
		{Timestamp: ts(10), Outputs: []sched.CoreOutput{
			{ReqID: "a", NewTokenIDs: []int32{4}, Events: ev, PrefillStats: &ps, StopReason: -1},
			{ReqID: "b", NewTokenIDs: []int32{5}, Events: ev, PrefillStats: &ps, StopReason: -1},
		}},
		{Timestamp: ts(20), Outputs: []sched.CoreOutput{
			{ReqID: "a", NewTokenIDs: []int32{6}, StopReason: -1},
			{ReqID: "b", FinishReason: stats.FinishAbort, StopReason: -1},
		}},
		{Timestamp: ts(35), Outputs: []sched.CoreOutput{
			{ReqID: "a", NewTokenIDs: []int32{7}, FinishReason: stats.FinishLength, StopReason: -1},
			{ReqID: "ghost", NewTokenIDs: []int32{1}, StopReason: -1},
		}},
	}
	var its []*stats.IterationStats
	for i := range steps {
		if i == 1 {
			if got := p.Abort("b"); !slices.Equal(got, []sched.RequestID{"b"}) {
				t.Fatalf("Abort(b) = %v", got)
			}
		}
		it := stats.NewIterationStats(steps[i].Timestamp.Add(time.Millisecond))
		p.Process(&steps[i], it)
		its = append(its, it)
	}
	if got := []int{its[0].NumPromptTokens(), its[1].NumPromptTokens(), its[2].NumPromptTokens()}; !slices.Equal(got, []int{6, 0, 0}) {
		t.Errorf("prompt tokens per iteration %v", got)
	}
	if got := []int{its[0].NumGenerationTokens, its[1].NumGenerationTokens, its[2].NumGenerationTokens}; !slices.Equal(got, []int{2, 1, 1}) {
		t.Errorf("generation tokens per iteration %v (the unknown id must not count)", got)
	}
	if its[0].PromptTokenStats.Computed != 4 || its[0].PromptTokenStats.LocalCacheHit != 2 {
		t.Errorf("prompt split %+v", its[0].PromptTokenStats)
	}
	if len(its[0].TimeToFirstTokensIter) != 2 || its[0].TimeToFirstTokensIter[0] != 11*time.Millisecond ||
		!slices.Equal(its[0].TimeToFirstTokenRequestIDs, []string{"a", "b"}) {
		t.Errorf("TTFT %v ids %q", its[0].TimeToFirstTokensIter, its[0].TimeToFirstTokenRequestIDs)
	}
	if !slices.Equal(its[1].InterTokenLatencyRequestIDs, []string{"a"}) || !slices.Equal(its[2].InterTokenLatencyRequestIDs, []string{"a"}) {
		t.Errorf("ITL ids %q %q", its[1].InterTokenLatencyRequestIDs, its[2].InterTokenLatencyRequestIDs)
	}
	if !slices.Equal(its[1].InterTokenLatenciesIter, []time.Duration{10 * time.Millisecond}) || !slices.Equal(its[2].InterTokenLatenciesIter, []time.Duration{15 * time.Millisecond}) {
		t.Errorf("ITL %v %v", its[1].InterTokenLatenciesIter, its[2].InterTokenLatenciesIter)
	}
	if len(its[1].FinishedRequests) != 1 || len(its[2].FinishedRequests) != 1 {
		t.Fatalf("finished: %d, %d", len(its[1].FinishedRequests), len(its[2].FinishedRequests))
	}
	b, a := its[1].FinishedRequests[0], its[2].FinishedRequests[0]
	if b.FinishReason != stats.FinishAbort || !b.ClientAbort || b.NumGenerationTokens != 1 || b.NumPromptTokens != 3 || b.RequestID != "b" {
		t.Errorf("b: %+v", b)
	}
	want := stats.FinishedRequestStats{
		FinishReason: stats.FinishLength, E2ELatency: 36 * time.Millisecond, NumPromptTokens: 3, NumGenerationTokens: 3,
		MaxTokensParam: 3, QueuedTime: time.Millisecond, PrefillTime: 8 * time.Millisecond, DecodeTime: 25 * time.Millisecond,
		InferenceTime: 33 * time.Millisecond, MeanTimePerOutputToken: 12500 * time.Microsecond, NumCachedTokens: 1,
		RequestID: "a",
	}
	if a != want {
		t.Errorf("a:\n got %+v\nwant %+v", a, want)
	}
	if !slices.Equal(its[1].NParamsIter, []int{1}) || !slices.Equal(its[2].MaxNumGenerationTokensIter, []int{3}) {
		t.Errorf("parent observations %v %v", its[1].NParamsIter, its[2].MaxNumGenerationTokensIter)
	}
	if p.HasUnfinished() {
		t.Errorf("requests left")
	}
}

func TestProcessorAbortAll(t *testing.T) {
	p := newTestProcessor()
	for _, k := range []Kind{Delta, FinalOnly} {
		if _, err := p.AddRequest(Request{ID: k.String(), Params: params(func(p *sampling.Params) { p.N = 2 }), Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	p.Process(&sched.CoreOutputs{Outputs: []sched.CoreOutput{{ReqID: "delta-0", NewTokenIDs: ids("a"), FinishReason: stats.FinishLength, StopReason: -1}}}, nil)
	outs := p.AbortAll()
	if len(outs) != 2 || p.HasUnfinished() {
		t.Fatalf("AbortAll: %d outputs, unfinished %v", len(outs), p.HasUnfinished())
	}
	for _, o := range outs {
		want := 2
		if o.RequestID == "delta" {
			want = 1 // the finished sequence was already delivered
		}
		if !o.Finished || len(o.Outputs) != want {
			t.Errorf("%s: %+v", o.RequestID, o)
		}
		for _, c := range o.Outputs {
			if c.FinishReason == stats.FinishNone {
				t.Errorf("%s: unfinished sequence %d", o.RequestID, c.Index)
			}
		}
	}
}

func TestProcessorLogprobs(t *testing.T) {
	lp := func(tok int32) *sampling.Logprobs {
		return &sampling.Logprobs{Sampled: sampling.TokenLogprob{Token: tok, Logprob: -float32(tok)}, Rank: 1}
	}
	two := 2
	cases := []struct {
		name     string
		logprobs *int
		kind     Kind
		want     [][]int32 // sampled tokens of the logprobs per step's output
	}{
		{"not requested: dropped", nil, Delta, [][]int32{nil, nil}},
		{"delta: new positions only", &two, Delta, [][]int32{{3}, {4, 5}}},
		{"cumulative: all positions", &two, Cumulative, [][]int32{{3}, {3, 4, 5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newTestProcessor()
			if _, err := p.AddRequest(Request{ID: "r", Params: params(func(p *sampling.Params) { p.Logprobs = c.logprobs }), Kind: c.kind}); err != nil {
				t.Fatal(err)
			}
			steps := []sched.CoreOutput{
				{ReqID: "r", NewTokenIDs: []int32{3}, NewLogprobs: []*sampling.Logprobs{lp(3)}, StopReason: -1},
				{ReqID: "r", NewTokenIDs: []int32{4, 5}, NewLogprobs: []*sampling.Logprobs{lp(4), lp(5)}, FinishReason: stats.FinishLength, StopReason: -1},
			}
			for i, o := range steps {
				outs, _ := p.Process(&sched.CoreOutputs{Outputs: []sched.CoreOutput{o}}, nil)
				var got []int32
				for _, l := range outs[0].Outputs[0].Logprobs {
					got = append(got, l.Sampled.Token)
					if l.Sampled.Logprob != -float32(l.Sampled.Token) {
						t.Errorf("logprob of %d = %g", l.Sampled.Token, l.Sampled.Logprob)
					}
				}
				if !slices.Equal(got, c.want[i]) {
					t.Errorf("step %d: logprobs for %v, want %v", i, got, c.want[i])
				}
			}
		})
	}
}

// TestProcessorStructuredStatistics: a structured request's compile time
// is observed once, on its first output (not once per sequence of n = 2),
// an unconstrained request's never; the step's mask times pass through.
func TestProcessorStructuredStatistics(t *testing.T) {
	p := newTestProcessor()
	two := params(func(p *sampling.Params) { p.N = 2 })
	if _, err := p.AddRequest(Request{ID: "s", PromptTokenIDs: []int32{1}, Params: two, ArrivalTime: ts(0), Structured: true, CompileTime: 7 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddRequest(Request{ID: "u", PromptTokenIDs: []int32{1}, Params: params(nil), ArrivalTime: ts(0)}); err != nil {
		t.Fatal(err)
	}
	masks := []time.Duration{30 * time.Microsecond, 50 * time.Microsecond}
	steps := []sched.CoreOutputs{
		{Timestamp: ts(10), MaskTimes: masks, Outputs: []sched.CoreOutput{
			{ReqID: sched.RequestID(ChildID("s", 0, 2)), NewTokenIDs: []int32{4}, StopReason: -1},
			{ReqID: sched.RequestID(ChildID("s", 1, 2)), NewTokenIDs: []int32{5}, StopReason: -1},
			{ReqID: "u", NewTokenIDs: []int32{5}, StopReason: -1},
		}},
		{Timestamp: ts(20), Outputs: []sched.CoreOutput{
			{ReqID: sched.RequestID(ChildID("s", 0, 2)), NewTokenIDs: []int32{6}, StopReason: -1},
		}},
	}
	var its []*stats.IterationStats
	for i := range steps {
		it := stats.NewIterationStats(steps[i].Timestamp)
		p.Process(&steps[i], it)
		its = append(its, it)
	}
	if !slices.Equal(its[0].StructuredCompileTimesIter, []time.Duration{7 * time.Millisecond}) || len(its[1].StructuredCompileTimesIter) != 0 {
		t.Errorf("compile times %v, %v; want [7ms], []", its[0].StructuredCompileTimesIter, its[1].StructuredCompileTimesIter)
	}
	if !slices.Equal(its[0].StructuredMaskTimesIter, masks) || len(its[1].StructuredMaskTimesIter) != 0 {
		t.Errorf("mask times %v, %v; want %v, []", its[0].StructuredMaskTimesIter, its[1].StructuredMaskTimesIter, masks)
	}
}
