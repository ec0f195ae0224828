package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"govllm/internal/kvcache"
	"govllm/internal/model"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/tensor"
	"govllm/internal/testmodels"
)

// golden returns a stories260K golden case's prompt ids (BOS first) and
// the greedy continuation the reference produced after them.
func golden(t *testing.T, name string) (prompt, cont []int32) {
	t.Helper()
	g := testmodels.LoadGolden(t, name)
	return g.PromptIDs(), g.Continuation()
}

func loadStories(t *testing.T) *model.Model {
	t.Helper()
	dir := testmodels.Dir(t, "stories260K")
	m, err := model.Load(filepath.Join(dir, "stories260K.gguf"), model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// seqState is one sequence driven by miniSched.
type seqState struct {
	id             sched.RequestID
	prompt, output []int32
	params         sampling.Params
	computed       int
	blocks         []kvcache.BlockID
	logprobs       []*sampling.Logprobs
	constraint     sampling.Constraint // advanced by each sampled token
}

// miniSched is a minimal scheduler for unit tests: every active sequence
// gets up to chunk tokens per step; blocks come from a shuffled free list so
// block tables are scattered.
type miniSched struct {
	blockSize int
	free      []kvcache.BlockID
	seqs      []*seqState
	maskTimes int // RunnerOutput.MaskTimes entries seen
}

func newMiniSched(numBlocks, blockSize int, seed uint64) *miniSched {
	ms := &miniSched{blockSize: blockSize}
	for i := range numBlocks {
		ms.free = append(ms.free, kvcache.BlockID(i))
	}
	rng := sampling.NewRNG(seed)
	for i := len(ms.free) - 1; i > 0; i-- {
		j := int(rng.Uint64() % uint64(i+1))
		ms.free[i], ms.free[j] = ms.free[j], ms.free[i]
	}
	return ms
}

// step schedules every sequence with fewer than maxOut outputs, runs r and
// records the results.
func (ms *miniSched) step(t *testing.T, r *Runner, chunk, maxOut int) bool {
	t.Helper()
	so := &sched.SchedulerOutput{}
	var active []*seqState
	for _, s := range ms.seqs {
		if len(s.output) >= maxOut {
			continue
		}
		known := append(slices.Clone(s.prompt), s.output...)
		end := min(s.computed+chunk, len(known))
		for len(s.blocks)*ms.blockSize < end {
			s.blocks = append(s.blocks, ms.free[0])
			ms.free = ms.free[1:]
		}
		so.Requests = append(so.Requests, sched.ScheduledRequest{
			ID: s.id, TokenIDs: known[s.computed:end], Start: s.computed, BlockTable: s.blocks,
			Sample: end == len(known), Params: &s.params, PromptTokenIDs: s.prompt, OutputTokenIDs: s.output,
			Constraint: s.constraint,
		})
		so.TotalNumScheduledTokens += end - s.computed
		active = append(active, s)
	}
	if len(active) == 0 {
		return false
	}
	out, err := r.Execute(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.SampledTokenIDs) != len(active) {
		t.Fatalf("%d sampled ids for %d requests", len(out.SampledTokenIDs), len(active))
	}
	ms.maskTimes += len(out.MaskTimes)
	for i, s := range active {
		req := &so.Requests[i]
		s.computed += len(req.TokenIDs)
		tok := out.SampledTokenIDs[i]
		if !req.Sample {
			if tok != -1 {
				t.Fatalf("%s: partial prefill returned token %d, want -1", s.id, tok)
			}
			continue
		}
		if tok < 0 {
			t.Fatalf("%s: no token sampled", s.id)
		}
		s.output = append(s.output, tok)
		if s.constraint != nil {
			if err := s.constraint.Advance(tok); err != nil {
				t.Fatalf("%s: %v", s.id, err)
			}
		}
		if out.Logprobs != nil {
			s.logprobs = append(s.logprobs, out.Logprobs[i])
		}
	}
	return true
}

func newRunner(t *testing.T, m *model.Model, pool *tensor.Pool, numBlocks, blockSize int) *Runner {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NumBlocks, cfg.BlockSize = numBlocks, blockSize
	cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs = 64, 4
	cfg.EOSTokenID = 2
	r, err := New(m, pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGoldenGreedy runs the llama2.c golden cases through Execute: both
// sequences in the same steps, with scattered block tables, chunked
// prefill, and several block sizes.
func TestGoldenGreedy(t *testing.T) {
	m := loadStories(t)
	const maxOut = 40
	tests := []struct {
		blockSize, chunk int
		together         bool
	}{
		{16, 1 << 20, false},
		{16, 1 << 20, true},
		{1, 3, true},
		{4, 5, true},
		{7, 2, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("block=%d/chunk=%d/together=%v", tt.blockSize, tt.chunk, tt.together), func(t *testing.T) {
			pool := tensor.NewPool(2)
			defer pool.Close()
			r := newRunner(t, m, pool, 2*(16+maxOut)/tt.blockSize+4, tt.blockSize)
			ms := newMiniSched(r.cfg.NumBlocks, tt.blockSize, uint64(tt.chunk))
			var want [][]int32
			for _, name := range []string{"once_upon_a_time", "bytes_fallback"} {
				prompt, cont := golden(t, name)
				p := sampling.Default()
				p.Temperature = 0
				ms.seqs = append(ms.seqs, &seqState{id: sched.RequestID(name), prompt: prompt, params: p})
				want = append(want, cont[:maxOut])
			}
			if tt.together {
				for ms.step(t, r, tt.chunk, maxOut) {
				}
			} else {
				all := ms.seqs
				for _, s := range all {
					ms.seqs = []*seqState{s}
					for ms.step(t, r, tt.chunk, maxOut) {
					}
				}
				ms.seqs = all
			}
			for i, s := range ms.seqs {
				if !slices.Equal(s.output, want[i]) {
					t.Errorf("%s:\n got %v\nwant %v", s.id, s.output, want[i])
				}
			}
		})
	}
}

// TestSeededAndLogprobs checks that a seeded request draws the same tokens
// alone and among batch mates, and that logprobs come back only for the
// request that asked, aligned with its row.
func TestSeededAndLogprobs(t *testing.T) {
	m := loadStories(t)
	prompt, _ := golden(t, "once_upon_a_time")
	other, _ := golden(t, "bytes_fallback")
	const maxOut = 24
	seeded := sampling.Default()
	seeded.Temperature = 0.8
	seeded.Seed = new(int64(1234))
	seeded.Logprobs = new(3)
	unseeded := sampling.Default()
	run := func(mates int, seed int64) *seqState {
		pool := tensor.NewPool(2)
		defer pool.Close()
		r := newRunner(t, m, pool, 64, 8)
		ms := newMiniSched(64, 8, uint64(mates))
		p := seeded
		p.Seed = new(seed)
		target := &seqState{id: "target", prompt: prompt, params: p}
		for i := range mates {
			ms.seqs = append(ms.seqs, &seqState{id: sched.RequestID(fmt.Sprint("mate", i)), prompt: other[:4+i], params: unseeded})
		}
		ms.seqs = append(ms.seqs, target)
		for ms.step(t, r, 4, maxOut) {
		}
		for _, s := range ms.seqs[:mates] {
			if len(s.logprobs) != 0 && slices.ContainsFunc(s.logprobs, func(l *sampling.Logprobs) bool { return l != nil }) {
				t.Fatalf("%s got logprobs it did not ask for", s.id)
			}
		}
		return target
	}
	alone := run(0, 1234)
	crowded := run(3, 1234)
	if !slices.Equal(alone.output, crowded.output) {
		t.Fatalf("seeded tokens differ with batch mates:\nalone   %v\ncrowded %v", alone.output, crowded.output)
	}
	if other := run(0, 99); slices.Equal(other.output, alone.output) {
		t.Fatalf("seeds 1234 and 99 drew the same %d tokens", maxOut)
	}
	if len(alone.logprobs) != maxOut {
		t.Fatalf("%d logprobs for %d tokens", len(alone.logprobs), maxOut)
	}
	for i, lp := range alone.logprobs {
		if lp == nil || lp.Sampled.Token != alone.output[i] || len(lp.Top) != 3 || lp.Rank < 1 {
			t.Fatalf("logprobs[%d] = %+v for token %d", i, lp, alone.output[i])
		}
	}
}

func TestExecuteErrors(t *testing.T) {
	cfg, err := model.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewDummy(cfg, tensor.F32, 1)
	r := newRunner(t, m, nil, 8, 4)
	greedy := sampling.Default()
	greedy.Temperature = 0
	ok := sched.ScheduledRequest{ID: "a", TokenIDs: []int32{1, 2}, BlockTable: []kvcache.BlockID{3}, Sample: true, Params: &greedy}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		req  func(*sched.ScheduledRequest)
		want error
	}{
		{"valid", context.Background(), func(*sched.ScheduledRequest) {}, nil},
		{"canceled", canceled, func(*sched.ScheduledRequest) {}, context.Canceled},
		{"no params", context.Background(), func(r *sched.ScheduledRequest) { r.Params = nil }, ErrInvalidStep},
		{"no tokens", context.Background(), func(r *sched.ScheduledRequest) { r.TokenIDs = nil }, ErrInvalidStep},
		{"block out of range", context.Background(), func(r *sched.ScheduledRequest) { r.BlockTable = []kvcache.BlockID{8} }, model.ErrBatch},
		{"block table too short", context.Background(), func(r *sched.ScheduledRequest) { r.Start = 4 }, model.ErrBatch},
		{"token out of vocabulary", context.Background(), func(r *sched.ScheduledRequest) { r.TokenIDs = []int32{int32(cfg.VocabSize)} }, model.ErrBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ok
			tt.req(&req)
			out, err := r.Execute(tt.ctx, &sched.SchedulerOutput{Requests: []sched.ScheduledRequest{req}})
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && (len(out.SampledTokenIDs) != 1 || out.SampledTokenIDs[0] < 0 || out.Logprobs != nil) {
				t.Fatalf("output %+v", out)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		ok   bool
	}{
		{"default", func(*Config) {}, true},
		{"no blocks", func(c *Config) { c.NumBlocks = 0 }, false},
		{"block size 0", func(c *Config) { c.BlockSize = 0 }, false},
		{"no token budget", func(c *Config) { c.MaxNumBatchedTokens = 0 }, false},
		{"no seqs", func(c *Config) { c.MaxNumSeqs = 0 }, false},
		{"bad eos", func(c *Config) { c.EOSTokenID = -2 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate() = %v, ok want %v", err, tt.ok)
			}
		})
	}
	cfg, _ := model.DummyConfig("default")
	m := model.NewDummy(cfg, tensor.F32, 1)
	c := DefaultConfig()
	c.EOSTokenID = int32(cfg.VocabSize)
	if _, err := New(m, nil, c); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New with eos outside the vocabulary: %v", err)
	}
}

// TestLogitsBitIdenticalInBatch checks the strongest form of batch
// invariance on F32 and Q8_0 models: the logits of a sequence are
// bit-identical whether it runs alone or among batch mates with other
// lengths (different row counts in every matrix multiplication), and
// whatever the number of threads. Token-level invariance follows from it
// for any sampling parameters.
func TestLogitsBitIdenticalInBatch(t *testing.T) {
	for _, dt := range []struct {
		name string
		typ  tensor.DType
	}{{"F32", tensor.F32}, {"Q8_0", tensor.Q8_0}} {
		t.Run(dt.name, func(t *testing.T) { testLogitsBitIdentical(t, dt.typ) })
	}
}

func testLogitsBitIdentical(t *testing.T, typ tensor.DType) {
	cfg, err := model.DummyConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	m := model.NewDummy(cfg, typ, 3)
	greedy := sampling.Default()
	greedy.Temperature = 0
	prompt := []int32{1, 70, 80, 90, 100, 110, 120, 130, 140}
	const maxOut = 6
	run := func(mates, threads int) [][]float32 {
		pool := tensor.NewPool(threads)
		defer pool.Close()
		r := newRunner(t, m, pool, 64, 8)
		ms := newMiniSched(64, 8, uint64(mates))
		target := &seqState{id: "target", prompt: prompt, params: greedy}
		for i := range mates {
			mate := []int32{1}
			for j := range 3 + 5*i {
				mate = append(mate, int32(3+(j*37+i*11)%500))
			}
			ms.seqs = append(ms.seqs, &seqState{id: sched.RequestID(fmt.Sprint("mate", i)), prompt: mate, params: greedy})
		}
		ms.seqs = append(ms.seqs, target)
		var rows [][]float32
		for {
			before := len(target.output)
			if !ms.step(t, r, 5, maxOut) {
				break
			}
			if len(target.output) > before {
				// The target is the last sequence that sampled this step.
				k := len(r.rows) - 1
				rows = append(rows, slices.Clone(r.logitsRow(k)))
			}
		}
		return rows
	}
	alone := run(0, 2)
	tests := []struct {
		name           string
		mates, threads int
	}{
		{"batch mates", 3, 2},
		{"one thread", 0, 1},
		{"batch mates, three threads", 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(tt.mates, tt.threads)
			if len(alone) != maxOut || len(got) != maxOut {
				t.Fatalf("captured %d and %d logits rows, want %d", len(alone), len(got), maxOut)
			}
			for i := range alone {
				for j := range alone[i] {
					if alone[i][j] != got[i][j] {
						t.Fatalf("token %d: logit %d is %v alone on 2 threads, %v here", i, j, alone[i][j], got[i][j])
					}
				}
			}
		})
	}
}

// logitsRow returns the logits row of the k-th sampled request of the last
// step, valid until the next Execute. Sampling rewrites rows in place
// (penalties, masks), so it is meaningful for greedy requests without
// penalties or min_tokens, which leave their row untouched.
func (r *Runner) logitsRow(k int) []float32 { return r.logits[k*r.vocab : (k+1)*r.vocab] }

// script is a structured-output constraint that allows exactly one token
// at each step: toks[k] at the k-th.
type script struct {
	toks []int32
	k    int
}

func (c *script) Mask(dst []uint64) {
	clear(dst)
	id := c.toks[c.k]
	dst[id>>6] |= 1 << (id & 63)
}

func (c *script) Advance(tok int32) error {
	if tok != c.toks[c.k] {
		return fmt.Errorf("token %d at step %d, the mask allowed only %d", tok, c.k, c.toks[c.k])
	}
	c.k++
	return nil
}

func (c *script) Fork() sampling.Constraint { d := *c; return &d }

// TestConstraintMasks: a sequence with a constraint samples, at
// temperature 1 among random-looking logits, exactly the one token its
// mask allows at each step, while an unconstrained batch mate samples
// freely; RunnerOutput.MaskTimes has one entry per constrained sample.
func TestConstraintMasks(t *testing.T) {
	m := loadStories(t)
	prompt, _ := golden(t, "once_upon_a_time")
	const maxOut = 12
	want := []int32{5, 300, 511, 7, 64, 63, 65, 128, 1, 200, 100, 2}
	pool := tensor.NewPool(2)
	defer pool.Close()
	r := newRunner(t, m, pool, 64, 8)
	ms := newMiniSched(64, 8, 1)
	hot := sampling.Default()
	hot.Temperature = 1
	constrained := &seqState{id: "constrained", prompt: prompt, params: hot, constraint: &script{toks: want}}
	free := &seqState{id: "free", prompt: prompt[:5], params: hot}
	ms.seqs = append(ms.seqs, constrained, free)
	for ms.step(t, r, 4, maxOut) {
	}
	if !slices.Equal(constrained.output, want) {
		t.Fatalf("constrained output %v, want %v", constrained.output, want)
	}
	if len(free.output) != maxOut || slices.Equal(free.output, want) {
		t.Fatalf("free output %v", free.output)
	}
	if ms.maskTimes != maxOut {
		t.Fatalf("%d mask times reported, want %d (one per constrained sample)", ms.maskTimes, maxOut)
	}
}
