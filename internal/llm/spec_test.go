package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"

	"govllm/internal/model"
	"govllm/internal/output"
	"govllm/internal/runner"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/specdec"
	"govllm/internal/stats"
	"govllm/internal/testmodels"
	"govllm/internal/tokenizer"
)

// specLogger sums the steps' speculative-decoding stats.
type specLogger struct {
	mu  sync.Mutex
	tot stats.SpecDecodingStats
}

func (l *specLogger) Record(s *stats.SchedulerStats, _ *stats.IterationStats) {
	sd := s.SpecDecoding
	if sd == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tot.NumDrafts += sd.NumDrafts
	l.tot.NumDraftTokens += sd.NumDraftTokens
	l.tot.NumAcceptedTokens += sd.NumAcceptedTokens
}

func ngramSpec(k int) *sched.Speculative {
	return &sched.Speculative{Drafter: sched.DraftFunc(specdec.Ngram{Min: 1, Max: 3}.Propose), NumTokens: k}
}

// specWorkload is greedy, seeded-sampled (with top-k, top-p, penalties),
// logprobs and n = 2 requests on prompts that repeat themselves, so the
// n-gram proposer has something to propose from the start.
func specWorkload(vocab int) []Request {
	var reqs []Request
	for i := range 6 {
		p := make([]int32, 0, 24)
		for len(p) < 8+3*i {
			for j := range 3 + i%3 {
				p = append(p, int32((i*97+j*31+5)%vocab))
			}
		}
		params := forced(40)
		switch i % 3 {
		case 1:
			seed := int64(1000 + i)
			params.Temperature, params.TopK, params.TopP, params.Seed = 0.8, 40, 0.95, &seed
			params.RepetitionPenalty, params.PresencePenalty, params.FrequencyPenalty = 1.1, 0.2, 0.1
		case 2:
			seed := int64(2000 + i)
			params.Temperature, params.Seed, params.N = 1, &seed, 2
			lp := 3
			params.Logprobs = &lp
		}
		reqs = append(reqs, Request{ID: fmt.Sprintf("r%d", i), PromptTokenIDs: p, Params: params})
	}
	return reqs
}

// generateOutputs runs reqs to completion on the sync engine.
func generateOutputs(t *testing.T, s *stories, o coreOpts, reqs []Request, loggers ...StatLogger) []*output.RequestOutput {
	t.Helper()
	c, g := s.core(t, o)
	g.Open()
	e, err := New(Config{MaxModelLen: cmp.Or(o.maxModelLen, 512)}, c, s.tok, loggers...)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := e.Generate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// sameOutputs compares every sequence's tokens, text, logprobs and finish.
func sameOutputs(t *testing.T, what string, want, got []*output.RequestOutput) {
	t.Helper()
	for i := range want {
		w, g := want[i].Outputs, got[i].Outputs
		if len(w) != len(g) {
			t.Fatalf("%s: request %d: %d sequences, want %d", what, i, len(g), len(w))
		}
		for j := range w {
			if !slices.Equal(w[j].TokenIDs, g[j].TokenIDs) || w[j].Text != g[j].Text || w[j].FinishReason != g[j].FinishReason {
				t.Errorf("%s: request %d seq %d: tokens %v (%v)\nwant %v (%v)", what, i, j, g[j].TokenIDs, g[j].FinishReason, w[j].TokenIDs, w[j].FinishReason)
			}
			if !reflect.DeepEqual(w[j].Logprobs, g[j].Logprobs) {
				t.Errorf("%s: request %d seq %d: logprobs differ", what, i, j)
			}
		}
	}
}

// TestSpeculativeExactEveryModel: with n-gram speculative decoding (k =
// 4) greedy, seeded-sampled, logprobs and n = 2 requests give exactly the
// outputs of the run without it, on stories260K and on the synthetic
// llama.cpp models of every architecture (Q8_0) and every quantization of
// the llama one: the model scores a drafted position in a multi-token
// step bit for bit as it would one token at a time. Some drafts must be
// accepted, or the test proves nothing.
func TestSpeculativeExactEveryModel(t *testing.T) {
	type tm struct {
		name string
		s    *stories
	}
	models := []tm{{"stories260K", loadStories(t)}}
	for _, sm := range testmodels.SyntheticModels(t) {
		if sm.Quant != "Q8_0" && sm.Arch != "llama" {
			continue
		}
		m, err := model.Load(sm.Path, model.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Load(sm.Path, tokenizer.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, tm{sm.Arch + "/" + sm.Quant, &stories{model: m, tok: tok}})
	}
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			reqs := specWorkload(m.s.model.Config.VocabSize)
			want := generateOutputs(t, m.s, coreOpts{}, reqs)
			sl := &specLogger{}
			got := generateOutputs(t, m.s, coreOpts{spec: ngramSpec(4)}, reqs, sl)
			sameOutputs(t, "speculative", want, got)
			if sl.tot.NumAcceptedTokens == 0 {
				t.Fatalf("no draft accepted: %+v", sl.tot)
			}
			t.Logf("drafts %d, draft tokens %d, accepted %d", sl.tot.NumDrafts, sl.tot.NumDraftTokens, sl.tot.NumAcceptedTokens)
		})
	}
}

// TestSpeculativePreemptionAndPrefixCache: on stories260K through the
// async engine with a KV cache too small for the batch and prefix caching
// on, speculative outputs equal the plain run's (drafts are discarded at
// preemption and never cached).
func TestSpeculativePreemptionAndPrefixCache(t *testing.T) {
	s := loadStories(t)
	reqs := specWorkload(s.model.Config.VocabSize)
	for i := range reqs {
		reqs[i].Params.N = 1
	}
	want := generateOutputs(t, s, coreOpts{}, reqs)
	tiny := coreOpts{numBlocks: 14, blockSize: 8, maxModelLen: 80, prefixCaching: true, spec: ngramSpec(4)}
	c, g := s.core(t, tiny)
	rec := newRecorder()
	sl := &specLogger{}
	got := runAsync(t, c, g, s.tok, Config{MaxModelLen: 80}, reqs, rec, sl)
	if a := rec.snapshot(); a.Preemptions == 0 {
		t.Fatalf("no preemption (max running %d)", a.MaxRunning)
	}
	if sl.tot.NumAcceptedTokens == 0 {
		t.Fatalf("no draft accepted: %+v", sl.tot)
	}
	for i, r := range reqs {
		if w := want[i].Outputs[0].TokenIDs; !slices.Equal(got[r.ID].tokens[0], w) {
			t.Errorf("%s: %v with speculation and preemption, want %v", r.ID, got[r.ID].tokens[0], w)
		}
	}
}

// TestSpeculativeKeepsDistribution: unseeded sampling at temperature 1
// draws the token after a drafted position from the same distribution
// with and without speculation. 400 requests each; the two samples of the
// 4th output token are compared with a chi-square test of homogeneity
// (the statistic is checked against the 0.1 % critical value, so a
// correct sampler fails about once in a thousand seeds; the seeds are
// fixed, so the outcome is deterministic).
func TestSpeculativeKeepsDistribution(t *testing.T) {
	s := loadStories(t)
	const n, pos = 400, 5
	reqs := make([]Request, n)
	// The story's opening, its greedy continuation, the opening again:
	// the proposer drafts the continuation, which the model often takes.
	prompt := slices.Concat(s.prompt, s.golden[:24], s.prompt[1:])
	for i := range reqs {
		p := sampling.Default()
		p.Temperature, p.MaxTokens, p.IgnoreEOS = 1, pos+1, true
		reqs[i] = Request{ID: fmt.Sprintf("r%d", i), PromptTokenIDs: prompt, Params: p}
	}
	count := func(outs []*output.RequestOutput) map[int32]int {
		m := map[int32]int{}
		for _, o := range outs {
			m[o.Outputs[0].TokenIDs[pos]]++
		}
		return m
	}
	plain := count(generateOutputs(t, s, coreOpts{}, reqs))
	sl := &specLogger{}
	spec := count(generateOutputs(t, s, coreOpts{spec: ngramSpec(4)}, reqs, sl))
	if sl.tot.NumAcceptedTokens == 0 {
		t.Fatalf("no draft accepted: %+v", sl.tot)
	}
	chi2, dof := chiSquareHomogeneity(plain, spec, n)
	if crit := chiSquareCritical001(dof); chi2 > crit {
		t.Fatalf("chi-square %.1f > %.1f (dof %d): distributions differ\nplain %v\nspec  %v", chi2, crit, dof, plain, spec)
	}
	t.Logf("chi-square %.1f (dof %d); accepted %d of %d drafted", chi2, dof, sl.tot.NumAcceptedTokens, sl.tot.NumDraftTokens)
}

// chiSquareHomogeneity compares two samples of size n over categories,
// pooling categories with fewer than 10 observations in both into one.
func chiSquareHomogeneity(a, b map[int32]int, n int) (chi2 float64, dof int) {
	cats := map[int32]bool{}
	for k := range a {
		cats[k] = true
	}
	for k := range b {
		cats[k] = true
	}
	var rows [][2]float64
	var rest [2]float64
	for k := range cats {
		if a[k]+b[k] < 10 {
			rest[0] += float64(a[k])
			rest[1] += float64(b[k])
			continue
		}
		rows = append(rows, [2]float64{float64(a[k]), float64(b[k])})
	}
	if rest[0]+rest[1] > 0 {
		rows = append(rows, rest)
	}
	for _, r := range rows {
		e := (r[0] + r[1]) / 2 // equal sample sizes
		for _, o := range r {
			chi2 += (o - e) * (o - e) / e
		}
	}
	return chi2, len(rows) - 1
}

// chiSquareCritical001 is the 0.999 quantile of chi-square with dof
// degrees of freedom (Wilson–Hilferty approximation, within 1 % here).
func chiSquareCritical001(dof int) float64 {
	if dof < 1 {
		return 0
	}
	k := float64(dof)
	const z = 3.090232 // the standard normal's 0.999 quantile
	x := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * x * x * x
}

// draftSpec is speculative decoding with draft model m (k tokens), its KV
// cache holding numBlocks blocks of 16 tokens.
func draftSpec(t *testing.T, m *model.Model, k, numBlocks int) *sched.Speculative {
	t.Helper()
	d, err := runner.NewDraftModel(m, nil, runner.DraftConfig{NumBlocks: numBlocks, BlockSize: 16, Chunk: 64})
	if err != nil {
		t.Fatal(err)
	}
	return &sched.Speculative{Drafter: d, NumTokens: k}
}

// TestSpeculativeDraftModelExact: with a draft model the outputs are
// exactly the plain run's — a model drafting for itself (every greedy
// draft accepted), the synthetic llama Q4_0 drafting for its Q8_0 twin,
// and a draft cache too small for the batch (its least recently used
// sequences are dropped and caught up again), with the target preempting.
func TestSpeculativeDraftModelExact(t *testing.T) {
	s := loadStories(t)
	reqs := specWorkload(s.model.Config.VocabSize)
	want := generateOutputs(t, s, coreOpts{}, reqs)

	greedy := []Request{reqs[0], reqs[3]}
	sl := &specLogger{}
	got := generateOutputs(t, s, coreOpts{spec: draftSpec(t, s.model, 4, 64)}, greedy, sl)
	sameOutputs(t, "self-draft greedy", []*output.RequestOutput{want[0], want[3]}, got)
	if sl.tot.NumDraftTokens == 0 || sl.tot.NumAcceptedTokens != sl.tot.NumDraftTokens {
		t.Fatalf("a model drafting greedily for itself: %+v, want every draft accepted", sl.tot)
	}

	sl = &specLogger{}
	got = generateOutputs(t, s, coreOpts{spec: draftSpec(t, s.model, 3, 64)}, reqs, sl)
	sameOutputs(t, "self-draft", want, got)

	sl = &specLogger{}
	tiny := coreOpts{numBlocks: 14, blockSize: 8, maxModelLen: 80, prefixCaching: true, spec: draftSpec(t, s.model, 4, 6)}
	one := slices.Clone(reqs)
	for i := range one {
		one[i].Params.N = 1
	}
	wantOne := generateOutputs(t, s, coreOpts{}, one)
	rec := newRecorder()
	got = generateOutputs(t, s, tiny, one, sl, rec)
	sameOutputs(t, "small draft cache, preemption", wantOne, got)
	if rec.snapshot().Preemptions == 0 {
		t.Fatal("no preemption")
	}
	if sl.tot.NumAcceptedTokens == 0 {
		t.Fatalf("no draft accepted: %+v", sl.tot)
	}

	var q8, q4 string
	for _, sm := range testmodels.SyntheticModels(t) {
		switch {
		case sm.Arch == "llama" && sm.Quant == "Q8_0":
			q8 = sm.Path
		case sm.Arch == "llama" && sm.Quant == "Q4_0":
			q4 = sm.Path
		}
	}
	target, err := model.Load(q8, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	draft, err := model.Load(q4, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(q8, tokenizer.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := &stories{model: target, tok: tok}
	reqs = specWorkload(target.Config.VocabSize)
	sl = &specLogger{}
	sameOutputs(t, "Q4_0 drafting for Q8_0", generateOutputs(t, ts, coreOpts{}, reqs),
		generateOutputs(t, ts, coreOpts{spec: draftSpec(t, draft, 4, 64)}, reqs, sl))
	if sl.tot.NumAcceptedTokens == 0 {
		t.Fatalf("no draft accepted: %+v", sl.tot)
	}
	t.Logf("Q4_0 for Q8_0: accepted %d of %d drafted", sl.tot.NumAcceptedTokens, sl.tot.NumDraftTokens)
}

// structuredWorkload asks for JSON objects of a schema with fixed keys
// (their text is forced) greedily, seeded, and with n = 2.
func structuredWorkload() []Request {
	schema := `{"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer","minimum":0,"maximum":99},` +
		`"friends":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","maxLength":8},"kind":{"enum":["cat","dog","bird"]}},` +
		`"required":["name","kind"],"additionalProperties":false},"maxItems":3}},"required":["name","age","friends"],"additionalProperties":false}`
	var reqs []Request
	for i := range 4 {
		p := forced(300)
		p.IgnoreEOS = false
		p.Structured = &sampling.Structured{JSONSchema: schema, Compact: true, Param: "structured_outputs"}
		if i > 0 {
			seed := int64(i)
			p.Temperature, p.Seed = 1, &seed
		}
		if i == 3 {
			p.N = 2
		}
		reqs = append(reqs, Request{ID: fmt.Sprintf("s%d", i), Prompt: "Once upon a time", Params: p})
	}
	return reqs
}

// TestFastForwardExact: structured outputs' fast-forward (the forced
// text of a JSON schema drafted and verified) changes no output — greedy,
// seeded, n = 2, alone and with n-gram speculation — on stories260K and
// the synthetic llama model, and its drafts are accepted.
func TestFastForwardExact(t *testing.T) {
	sm := testmodels.SyntheticModels(t)
	var q8 string
	for _, m := range sm {
		if m.Arch == "llama" && m.Quant == "Q8_0" {
			q8 = m.Path
		}
	}
	synth, err := model.Load(q8, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stok, err := tokenizer.Load(q8, tokenizer.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name string
		s    *stories
	}{{"stories260K", loadStories(t)}, {"llama/Q8_0", &stories{model: synth, tok: stok}}} {
		t.Run(s.name, func(t *testing.T) {
			reqs := structuredWorkload()
			want := generateOutputs(t, s.s, coreOpts{}, reqs)
			for _, o := range []coreOpts{{fastForward: true}, {fastForward: true, spec: ngramSpec(4)}} {
				sl := &specLogger{}
				got := generateOutputs(t, s.s, o, reqs, sl)
				sameOutputs(t, fmt.Sprintf("fast-forward (speculation %v)", o.spec != nil), want, got)
				if sl.tot.NumAcceptedTokens == 0 {
					t.Fatalf("no fast-forward draft accepted: %+v", sl.tot)
				}
				t.Logf("speculation %v: accepted %d of %d drafted in %d drafts", o.spec != nil, sl.tot.NumAcceptedTokens, sl.tot.NumDraftTokens, sl.tot.NumDrafts)
			}
			for _, o := range want {
				for _, c := range o.Outputs {
					if c.FinishReason == stats.FinishStop && !json.Valid([]byte(c.Text)) {
						t.Errorf("%s: output %q is not JSON", o.RequestID, c.Text)
					}
				}
			}
		})
	}
}
