package stats

import (
	"slices"
	"testing"
	"time"
)

// at returns a fixed instant plus s seconds: literal timestamps, as in vLLM's
// tests/v1/metrics/test_stats.py.
func at(s float64) time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestPrefillKVComputed(t *testing.T) {
	// vLLM test_prefill_kv_computed_{with_cache,no_cache,edge_cases}.
	cases := []struct {
		name           string
		prompt, cached int
		want           int
	}{
		{"with cache", 10000, 1200, 8800},
		{"no cache", 2000, 0, 2000},
		{"negative cached", 100, -1, 100},
		{"all cached", 100, 100, 0},
		{"cached over prompt (never negative)", 100, 120, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewIterationStats(at(6))
			rs := &RequestStateStats{ArrivalTime: at(0), ScheduledTime: at(0.1), FirstTokenTime: at(0.5), LastTokenTime: at(5), NumGenerationTokens: 50}
			f := it.UpdateFromFinished(FinishInfo{Reason: FinishStop, NumPromptTokens: c.prompt, MaxTokensParam: 100, NumCachedTokens: c.cached}, rs)
			if f.NumPromptTokens != c.prompt || f.NumCachedTokens != c.cached {
				t.Fatalf("got prompt %d cached %d", f.NumPromptTokens, f.NumCachedTokens)
			}
			if got := f.PrefillKVComputedTokens(); got != c.want {
				t.Errorf("PrefillKVComputedTokens = %d, want %d", got, c.want)
			}
			if len(it.FinishedRequests) != 1 || &it.FinishedRequests[0] != f {
				t.Errorf("finished request not appended")
			}
		})
	}
}

func TestPromptTokenStatsFromPrefill(t *testing.T) {
	// vLLM test_prompt_token_stats_* (govllm has no external KV transfer).
	cases := []struct {
		name                                 string
		prompt, local                        int
		computed, localHit, cachedTok, total int
	}{
		{"all computed", 1000, 0, 1000, 0, 0, 1000},
		{"partial local cache", 1000, 300, 700, 300, 300, 1000},
		{"full local cache, last token recomputed", 1000, 999, 1, 999, 999, 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p PromptTokenStats
			ps := NewPrefillStats(c.prompt, c.local)
			p.UpdateFromPrefill(&ps)
			want := PromptTokenStats{Computed: c.computed, LocalCacheHit: c.localHit, CachedTokens: c.cachedTok, Total: c.total}
			if p != want {
				t.Errorf("got %+v, want %+v", p, want)
			}
			if p.Computed+p.LocalCacheHit+p.ExternalKVTransfer != p.Total || p.LocalCacheHit+p.ExternalKVTransfer != p.CachedTokens {
				t.Errorf("invariants broken: %+v", p)
			}
			sum := 0
			for _, s := range PromptSources {
				sum += p.BySource(s)
			}
			if sum != p.Total {
				t.Errorf("by-source sum %d != total %d", sum, p.Total)
			}
		})
	}
}

func TestInterTokenLatencyPerCommittedToken(t *testing.T) {
	// vLLM test_inter_token_latency_tracks_each_committed_decode_token.
	rs := &RequestStateStats{ArrivalTime: at(0)}
	steps := []struct {
		tokens int
		ts     float64
	}{{1, 1}, {3, 4}, {2, 6}}
	var itl []time.Duration
	gen := 0
	for i, s := range steps {
		it := NewIterationStats(at(s.ts + 0.01))
		it.UpdateFromOutput(OutputUpdate{NumNewTokens: s.tokens, EngineTimestamp: at(s.ts), IsPrefilling: i == 0}, rs)
		itl = append(itl, it.InterTokenLatenciesIter...)
		gen += it.NumGenerationTokens
		if i == 0 && !slices.Equal(it.TimeToFirstTokensIter, []time.Duration{sec(1.01)}) {
			t.Errorf("TTFT = %v, want [1.01s]", it.TimeToFirstTokensIter)
		}
		if i > 0 && len(it.TimeToFirstTokensIter) != 0 {
			t.Errorf("step %d observed a TTFT", i)
		}
	}
	if gen != 6 || rs.NumGenerationTokens != 6 {
		t.Errorf("generation tokens: iterations %d, request %d; want 6", gen, rs.NumGenerationTokens)
	}
	if want := slices.Repeat([]time.Duration{sec(1)}, 5); !slices.Equal(itl, want) {
		t.Errorf("ITL = %v, want %v", itl, want)
	}
	if !rs.FirstTokenTime.Equal(at(1)) || !rs.LastTokenTime.Equal(at(6)) {
		t.Errorf("first/last token time = %v / %v", rs.FirstTokenTime, rs.LastTokenTime)
	}
	if rs.FirstTokenLatency != sec(1.01) {
		t.Errorf("FirstTokenLatency = %v", rs.FirstTokenLatency)
	}
}

func TestEventsAndFinishedIntervals(t *testing.T) {
	// A request queued at 1, scheduled at 2, preempted, re-scheduled at 5
	// (ignored), first token at 3, tokens until 9, finished in the
	// iteration received at 9.5; arrival at 0.5 (before tokenization).
	rs := &RequestStateStats{ArrivalTime: at(0.5)}
	it1 := NewIterationStats(at(3.1))
	ps := NewPrefillStats(10, 4)
	it1.UpdateFromOutput(OutputUpdate{
		NumNewTokens: 1, PrefillStats: &ps, EngineTimestamp: at(3), IsPrefilling: true,
		Events: []Event{{EventQueued, at(1)}, {EventScheduled, at(2)}},
	}, rs)
	if it1.NumPromptTokens() != 10 || it1.PromptTokenStats.Computed != 6 || it1.NumIterationTokens() != 11 {
		t.Errorf("iteration 1: %+v", it1.PromptTokenStats)
	}
	it2 := NewIterationStats(at(9.5))
	it2.UpdateFromOutput(OutputUpdate{
		NumNewTokens: 4, EngineTimestamp: at(9),
		Events: []Event{{EventPreempted, at(4)}, {EventScheduled, at(5)}, {EventPreempted, at(6)}, {EventScheduled, at(7)}},
	}, rs)
	if it2.NumPreemptedReqs != 2 {
		t.Errorf("NumPreemptedReqs = %d, want 2", it2.NumPreemptedReqs)
	}
	if it2.NumPromptTokens() != 0 {
		t.Errorf("decode iteration has prompt tokens %d", it2.NumPromptTokens())
	}
	f := it2.UpdateFromFinished(FinishInfo{Reason: FinishLength, NumPromptTokens: 10, MaxTokensParam: 5, NumCachedTokens: 4}, rs)
	want := FinishedRequestStats{
		FinishReason: FinishLength, E2ELatency: sec(9), NumPromptTokens: 10, NumGenerationTokens: 5,
		MaxTokensParam: 5, QueuedTime: sec(1), PrefillTime: sec(1), DecodeTime: sec(6),
		InferenceTime: sec(7), MeanTimePerOutputToken: sec(1.5), NumCachedTokens: 4,
	}
	if *f != want {
		t.Errorf("finished:\n got %+v\nwant %+v", *f, want)
	}
}

func TestFinishedClampsAndMissingEvents(t *testing.T) {
	cases := []struct {
		name string
		rs   RequestStateStats
		it   time.Time
		want FinishedRequestStats
	}{
		{
			name: "aborted before scheduling: all phases 0",
			rs:   RequestStateStats{ArrivalTime: at(1), QueuedTime: at(1.5)},
			it:   at(3),
			want: FinishedRequestStats{FinishReason: FinishAbort, E2ELatency: sec(2)},
		},
		{
			name: "one token: no TPOT",
			rs:   RequestStateStats{ArrivalTime: at(1), QueuedTime: at(1), ScheduledTime: at(2), FirstTokenTime: at(2.5), LastTokenTime: at(2.5), NumGenerationTokens: 1},
			it:   at(3),
			want: FinishedRequestStats{FinishReason: FinishAbort, E2ELatency: sec(2), QueuedTime: sec(1), PrefillTime: sec(0.5), InferenceTime: sec(0.5), NumGenerationTokens: 1},
		},
		{
			name: "clock going backwards clamps at 0",
			rs:   RequestStateStats{ArrivalTime: at(5), QueuedTime: at(3), ScheduledTime: at(2), FirstTokenTime: at(1), LastTokenTime: at(4), NumGenerationTokens: 4},
			it:   at(4),
			want: FinishedRequestStats{FinishReason: FinishAbort, DecodeTime: sec(3), InferenceTime: sec(3), MeanTimePerOutputToken: sec(1), NumGenerationTokens: 4},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := NewIterationStats(c.it)
			f := it.UpdateFromFinished(FinishInfo{Reason: FinishAbort}, &c.rs)
			if *f != c.want {
				t.Errorf("\n got %+v\nwant %+v", *f, c.want)
			}
			if f.InferenceTime != f.PrefillTime+f.DecodeTime {
				t.Errorf("inference %v != prefill %v + decode %v", f.InferenceTime, f.PrefillTime, f.DecodeTime)
			}
		})
	}
}

func TestTokenlessOutputObservesNoLatency(t *testing.T) {
	// An abort before the first token: no TTFT, no ITL, token times untouched.
	rs := &RequestStateStats{ArrivalTime: at(0)}
	it := NewIterationStats(at(2))
	it.UpdateFromOutput(OutputUpdate{EngineTimestamp: at(1.9), IsPrefilling: true, Events: []Event{{EventQueued, at(0.1)}}}, rs)
	if len(it.TimeToFirstTokensIter)+len(it.InterTokenLatenciesIter) != 0 || !rs.FirstTokenTime.IsZero() || !rs.LastTokenTime.IsZero() {
		t.Errorf("token-less output observed latency: %+v %+v", it, rs)
	}
	// A later token-less finish after tokens adds no ITL either.
	rs = &RequestStateStats{ArrivalTime: at(0)}
	it.UpdateFromOutput(OutputUpdate{NumNewTokens: 1, EngineTimestamp: at(1), IsPrefilling: true}, rs)
	it.UpdateFromOutput(OutputUpdate{EngineTimestamp: at(3)}, rs)
	if len(it.InterTokenLatenciesIter) != 0 || !rs.LastTokenTime.Equal(at(1)) {
		t.Errorf("token-less finish: ITL %v, last %v", it.InterTokenLatenciesIter, rs.LastTokenTime)
	}
}

func TestMonotonicClock(t *testing.T) {
	// time.Now carries a monotonic reading: an interval between two Now
	// values never goes negative, and stripping it still clamps.
	a := time.Now()
	b := time.Now()
	if Interval(a, b) < 0 || Interval(b.Round(0).Add(time.Hour), a) != 0 {
		t.Errorf("Interval not clamped")
	}
}

func TestObserveParent(t *testing.T) {
	it := NewIterationStats(at(0))
	it.ObserveParent(1, 7)
	it.ObserveParent(3, 12)
	if !slices.Equal(it.NParamsIter, []int{1, 3}) || !slices.Equal(it.MaxNumGenerationTokensIter, []int{7, 12}) {
		t.Errorf("got n %v, max gen %v", it.NParamsIter, it.MaxNumGenerationTokensIter)
	}
}

func TestRequestIDsFollowSamples(t *testing.T) {
	// Two requests in one step: "a" gets its first token, "b" three more
	// tokens; then "b" finishes. Every sample carries its request's id,
	// index for index.
	a := &RequestStateStats{ArrivalTime: at(0)}
	b := &RequestStateStats{ArrivalTime: at(0), FirstTokenTime: at(1), LastTokenTime: at(1), NumGenerationTokens: 1}
	it := NewIterationStats(at(4))
	it.UpdateFromOutput(OutputUpdate{NumNewTokens: 3, EngineTimestamp: at(4), RequestID: "b"}, b)
	it.UpdateFromOutput(OutputUpdate{NumNewTokens: 1, EngineTimestamp: at(4), IsPrefilling: true, RequestID: "a"}, a)
	it.UpdateFromFinished(FinishInfo{Reason: FinishStop, RequestID: "b"}, b)
	if !slices.Equal(it.TimeToFirstTokensIter, []time.Duration{sec(4)}) || it.TTFTRequestID(0) != "a" || it.TTFTRequestID(1) != "" {
		t.Errorf("TTFT %v ids %q", it.TimeToFirstTokensIter, it.TimeToFirstTokenRequestIDs)
	}
	if !slices.Equal(it.InterTokenLatenciesIter, slices.Repeat([]time.Duration{sec(1)}, 3)) ||
		!slices.Equal(it.InterTokenLatencyRequestIDs, []string{"b", "b", "b"}) {
		t.Errorf("ITL %v ids %q", it.InterTokenLatenciesIter, it.InterTokenLatencyRequestIDs)
	}
	if it.FinishedRequests[0].RequestID != "b" {
		t.Errorf("finished id %q", it.FinishedRequests[0].RequestID)
	}
	// A producer that fills only the samples: no id, no panic.
	bare := &IterationStats{InterTokenLatenciesIter: []time.Duration{1}}
	if bare.ITLRequestID(0) != "" || bare.TTFTRequestID(3) != "" {
		t.Error("missing ids must read as empty")
	}
}
