package sampling

import (
	"govllm/internal/cputime"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"testing"
)

func intp(v int) *int     { return &v }
func i64p(v int64) *int64 { return &v }
func ninf() float32       { return float32(math.Inf(-1)) }
func params(f func(*Params)) *Params {
	p := Default()
	if f != nil {
		f(&p)
	}
	return &p
}

// randLogits returns n logits in [-scale, scale) from a fixed generator.
func randLogits(seed uint64, n int, scale float32) []float32 {
	r := NewRNG(seed)
	l := make([]float32, n)
	for i := range l {
		l[i] = (float32(r.Float64())*2 - 1) * scale
	}
	return l
}

func TestArgmaxAndGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		want   int32
	}{
		{"single max", []float32{0, 3, 1, 2}, 1},
		{"ties to lowest id", []float32{1, 5, 2, 5, 5}, 1},
		{"negatives", []float32{-3, -1, -2}, 1},
		{"NaN never wins", []float32{float32(math.NaN()), 1, 0}, 1},
		{"all masked", []float32{ninf(), ninf()}, 0},
		{"last", []float32{0, 0, 0, 9}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			p := params(func(p *Params) { p.Temperature = 0 })
			rng := NewRNG(1)
			before := rng
			got, lp := s.Sample(slices.Clone(tt.logits), p, nil, nil, -1, &rng)
			if got != tt.want {
				t.Fatalf("Sample greedy = %d, want %d", got, tt.want)
			}
			if lp != nil {
				t.Fatalf("logprobs returned though not requested")
			}
			if rng != before {
				t.Fatalf("greedy sampling consumed randomness")
			}
		})
	}
}

func TestPenalties(t *testing.T) {
	base := []float32{2, -2, 1, 4, -1, 0.5}
	tests := []struct {
		name           string
		p              func(*Params)
		prompt, output []int32
		want           []float32
	}{
		{"none", nil, []int32{0, 1}, []int32{2}, base},
		{
			"repetition over prompt and output, once per distinct token",
			func(p *Params) { p.RepetitionPenalty = 2 },
			[]int32{0, 1, 1}, []int32{4, 0, 0},
			[]float32{1, -4, 1, 4, -2, 0.5},
		},
		{
			"frequency counts output only",
			func(p *Params) { p.FrequencyPenalty = 0.5 },
			[]int32{3}, []int32{0, 0, 2},
			[]float32{1, -2, 0.5, 4, -1, 0.5},
		},
		{
			"presence once per present output token",
			func(p *Params) { p.PresencePenalty = 1.5 },
			[]int32{3}, []int32{0, 0, 2},
			[]float32{0.5, -2, -0.5, 4, -1, 0.5},
		},
		{
			"negative penalties reward",
			func(p *Params) { p.PresencePenalty = -1; p.FrequencyPenalty = -0.25 },
			nil, []int32{5, 5},
			[]float32{2, -2, 1, 4, -1, 2},
		},
		{
			"repetition then frequency then presence",
			func(p *Params) { p.RepetitionPenalty = 2; p.FrequencyPenalty = 1; p.PresencePenalty = 1 },
			[]int32{3}, []int32{1, 1, 3},
			// 1: -2*2=-4, -2 (count 2), -1 → -7; 3: 4/2=2, -1, -1 → 0
			[]float32{2, -7, 1, 0, -1, 0.5},
		},
		{
			"out-of-vocabulary ids ignored",
			func(p *Params) { p.RepetitionPenalty = 2; p.FrequencyPenalty = 1 },
			[]int32{-1, 99}, []int32{6, 1000},
			base,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			for round := 0; round < 2; round++ { // scratch must be clean on reuse
				l := slices.Clone(base)
				p := params(tt.p)
				p.Temperature = 0
				s.Sample(l, p, tt.prompt, tt.output, -1, nil)
				if !slices.Equal(l, tt.want) {
					t.Fatalf("round %d: penalised logits = %v, want %v", round, l, tt.want)
				}
			}
		})
	}
}

func TestPenaltyChangesGreedyChoice(t *testing.T) {
	var s Sampler
	logits := []float32{1, 3, 2.5}
	p := params(func(p *Params) { p.Temperature = 0; p.FrequencyPenalty = 1 })
	if got, _ := s.Sample(slices.Clone(logits), p, nil, []int32{1}, -1, nil); got != 2 {
		t.Fatalf("with token 1 penalised, greedy = %d, want 2", got)
	}
	if got, _ := s.Sample(slices.Clone(logits), p, nil, nil, -1, nil); got != 1 {
		t.Fatalf("without output, greedy = %d, want 1", got)
	}
}

func TestMinTokens(t *testing.T) {
	// EOS (id 2) and stop id 3 are the best tokens.
	logits := []float32{0, 1, 9, 8, 2}
	tests := []struct {
		name   string
		p      func(*Params)
		output []int32
		eos    int32
		want   int32
	}{
		{"masks eos and stop ids before min", func(p *Params) { p.MinTokens = 2; p.StopTokenIDs = []int32{3} }, []int32{0}, 2, 4},
		{"no mask once reached", func(p *Params) { p.MinTokens = 2; p.StopTokenIDs = []int32{3} }, []int32{0, 0}, 2, 2},
		{"eos not masked with ignore_eos", func(p *Params) { p.MinTokens = 2; p.IgnoreEOS = true; p.StopTokenIDs = []int32{3} }, nil, 2, 2},
		{"no eos", func(p *Params) { p.MinTokens = 2 }, nil, -1, 2},
		{"min_tokens 0", func(p *Params) { p.StopTokenIDs = []int32{3} }, nil, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			for _, temp := range []float32{0, 1} {
				p := params(tt.p)
				p.MaxTokens = 10
				p.Temperature = temp
				p.TopK = 1 // random path that must agree with greedy
				rng := NewRNG(7)
				if got, _ := s.Sample(slices.Clone(logits), p, nil, tt.output, tt.eos, &rng); got != tt.want {
					t.Fatalf("temperature %g: got %d, want %d", temp, got, tt.want)
				}
			}
		})
	}
}

// refDist is a float64 reference of the sampling distribution: softmax of
// logits/T, then min_p, top_k, top_p by full sort, each renormalising.
func refDist(logits []float32, p *Params) []float64 {
	n := len(logits)
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	prob := make([]float64, n)
	var z float64
	for i, l := range logits {
		prob[i] = math.Exp((float64(l) - m) / float64(p.Temperature))
		z += prob[i]
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
		prob[i] /= z
	}
	sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = !math.IsInf(float64(logits[i]), -1)
	}
	renorm := func() {
		var s float64
		for i := range prob {
			if !keep[i] {
				prob[i] = 0
			}
			s += prob[i]
		}
		for i := range prob {
			prob[i] /= s
		}
	}
	if p.MinP > 0 {
		pmax := prob[order[0]]
		for i := range prob {
			if prob[i] < float64(p.MinP)*pmax*(1-1e-6) {
				keep[i] = false
			}
		}
		renorm()
	}
	if p.TopK > 0 && p.TopK < n {
		for r, i := range order {
			if r >= p.TopK {
				keep[i] = false
			}
		}
		renorm()
	}
	if p.TopP < 1 {
		var acc float64
		for _, i := range order {
			if !keep[i] {
				continue
			}
			if acc >= float64(p.TopP) {
				keep[i] = false
			}
			acc += prob[i]
		}
		renorm()
	}
	return prob
}

func TestFilterMatchesReference(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		scale float32
		p     func(*Params)
	}{
		{"top_k", 1000, 4, func(p *Params) { p.TopK = 40 }},
		{"top_k small vocab", 20, 4, func(p *Params) { p.TopK = 5; p.Temperature = 0.5 }},
		{"top_p large vocab (cut path)", 5000, 8, func(p *Params) { p.TopP = 0.9 }},
		{"top_p flat distribution", 3000, 0.01, func(p *Params) { p.TopP = 0.95 }},
		{"top_p long tail below the first cut", -5000, 0.01, func(p *Params) { p.TopP = 0.95 }},
		{"top_p small vocab", 50, 3, func(p *Params) { p.TopP = 0.5; p.Temperature = 1.3 }},
		{"top_p just below 1", 3000, 4, func(p *Params) { p.TopP = 0.99999994 }},
		{"top_p 0.5 peaked", 32000, 20, func(p *Params) { p.TopP = 0.5 }},
		{"top_p with min_p", 5000, 6, func(p *Params) { p.TopP = 0.9; p.MinP = 0.001 }},
		{"min_p", 2000, 5, func(p *Params) { p.MinP = 0.05 }},
		{"all three", 4000, 6, func(p *Params) { p.MinP = 0.01; p.TopK = 100; p.TopP = 0.8; p.Temperature = 0.7 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logits []float32
			if tt.n < 0 { // one dominant token and a heavy tail of weight ~1e-4 each
				tt.n = -tt.n
				logits = randLogits(uint64(tt.n), tt.n, tt.scale)
				for i := range logits {
					logits[i] -= 9.2
				}
				logits[17] = 0
			} else {
				logits = randLogits(uint64(tt.n), tt.n, tt.scale)
			}
			p := params(tt.p)
			want := refDist(logits, p)
			var s Sampler
			m := slices.Max(logits)
			c, total := s.filter(logits, m, p)
			got := make([]float64, tt.n)
			for _, x := range c {
				got[x.id] = float64(x.w) / total
			}
			for i := range want {
				if (want[i] == 0) != (got[i] == 0) || math.Abs(want[i]-got[i]) > 1e-6 {
					t.Fatalf("token %d: p = %g, reference %g (kept %d)", i, got[i], want[i], len(c))
				}
			}
		})
	}
}

func TestSingleCandidateFiltersEqualGreedy(t *testing.T) {
	tests := []struct {
		name string
		p    func(*Params)
	}{
		{"top_k=1", func(p *Params) { p.TopK = 1 }},
		{"top_p tiny", func(p *Params) { p.TopP = 1e-6 }},
		{"min_p=1", func(p *Params) { p.MinP = 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			for trial := uint64(0); trial < 50; trial++ {
				logits := randLogits(trial, 1000, 3)
				greedy := Argmax(logits)
				p := params(tt.p)
				p.Temperature = 1.5
				rng := NewRNG(trial)
				if got, _ := s.Sample(logits, p, nil, nil, -1, &rng); got != greedy {
					t.Fatalf("trial %d: got %d, greedy %d", trial, got, greedy)
				}
			}
		})
	}
}

// TestEmpiricalDistribution draws many tokens with a fixed seed and checks
// the counts against the reference distribution with a chi-square bound
// (p-value ≈ 1e-6 for the degrees of freedom used here).
func TestEmpiricalDistribution(t *testing.T) {
	logits := []float32{1.2, -0.5, 0.3, 2.0, 0.0, -1.5, 0.8, 1.9}
	tests := []struct {
		name string
		p    func(*Params)
	}{
		{"temperature 1", nil},
		{"temperature 0.6", func(p *Params) { p.Temperature = 0.6 }},
		{"temperature 2", func(p *Params) { p.Temperature = 2 }},
		{"top_k 4", func(p *Params) { p.TopK = 4 }},
		{"top_p 0.7", func(p *Params) { p.TopP = 0.7 }},
		{"min_p 0.2", func(p *Params) { p.MinP = 0.2 }},
	}
	const draws = 40000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params(tt.p)
			want := refDist(logits, p)
			var s Sampler
			rng := NewRNG(12345)
			counts := make([]int, len(logits))
			buf := make([]float32, len(logits))
			for range draws {
				copy(buf, logits)
				tok, _ := s.Sample(buf, p, nil, nil, -1, &rng)
				counts[tok]++
			}
			var chi2 float64
			df := -1
			for i, c := range counts {
				e := want[i] * draws
				if e == 0 {
					if c != 0 {
						t.Fatalf("token %d drawn %d times, probability 0", i, c)
					}
					continue
				}
				df++
				chi2 += (float64(c) - e) * (float64(c) - e) / e
			}
			if limit := 25 + 4*float64(df); chi2 > limit {
				t.Fatalf("chi2 = %.1f over %d dof (limit %.0f); counts %v, expected %v", chi2, df, limit, counts, want)
			}
		})
	}
}

func TestSeededReproducibility(t *testing.T) {
	logits := randLogits(3, 500, 2)
	p := params(func(p *Params) { p.Temperature = 0.8; p.Seed = i64p(42) })
	run := func(seed int64, skip int) []int32 {
		var s Sampler
		out := make([]int32, 0, 30)
		for i := range 30 {
			rng := SeededRNG(seed, i)
			// Unrelated draws in between (batch mates) must not matter.
			for range skip {
				other := NewRNG(uint64(skip))
				s.Sample(slices.Clone(logits), params(nil), nil, nil, -1, &other)
			}
			tok, _ := s.Sample(slices.Clone(logits), p, nil, out, -1, &rng)
			out = append(out, tok)
		}
		return out
	}
	a, b := run(42, 0), run(42, 3)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed gave different tokens:\n%v\n%v", a, b)
	}
	if c := run(43, 0); slices.Equal(a, c) {
		t.Fatalf("seeds 42 and 43 gave identical tokens %v", a)
	}
	if SeededRNG(1, 0) == SeededRNG(1, 1) || SeededRNG(1, 0) == SeededRNG(2, 0) {
		t.Fatal("SeededRNG collides on neighbouring inputs")
	}
}

func TestLogprobs(t *testing.T) {
	logits := randLogits(9, 300, 5)
	// Ties around the top, to pin rank and order semantics.
	logits[10], logits[20], logits[30] = 7, 7, 6
	tests := []struct {
		name string
		n    int
		p    func(*Params)
	}{
		{"greedy top 5", 5, func(p *Params) { p.Temperature = 0 }},
		{"top 0 only sampled", 0, func(p *Params) { p.Temperature = 0 }},
		{"random top 20 raw despite penalties", 20, func(p *Params) {
			p.Temperature = 0.9
			p.RepetitionPenalty = 1.3
			p.PresencePenalty = 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			p := params(tt.p)
			p.Logprobs = intp(tt.n)
			rng := NewRNG(5)
			tok, lp := s.Sample(slices.Clone(logits), p, []int32{10, 20}, []int32{30}, -1, &rng)
			if lp == nil {
				t.Fatal("no logprobs")
			}
			// float64 reference over the raw logits.
			var sum float64
			for _, l := range logits {
				sum += math.Exp(float64(l) - 7)
			}
			lse := 7 + math.Log(sum)
			if lp.Sampled.Token != tok || math.Abs(float64(lp.Sampled.Logprob)-(float64(logits[tok])-lse)) > 1e-5 {
				t.Fatalf("sampled = %+v, want token %d logprob %g", lp.Sampled, tok, float64(logits[tok])-lse)
			}
			rank := 0
			for _, l := range logits {
				if l >= logits[tok] {
					rank++
				}
			}
			if lp.Rank != rank {
				t.Fatalf("rank = %d, want %d", lp.Rank, rank)
			}
			order := make([]int, len(logits))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
			if len(lp.Top) != tt.n {
				t.Fatalf("len(Top) = %d, want %d", len(lp.Top), tt.n)
			}
			for i, x := range lp.Top {
				if x.Token != int32(order[i]) || math.Abs(float64(x.Logprob)-(float64(logits[order[i]])-lse)) > 1e-5 {
					t.Fatalf("Top[%d] = %+v, want token %d logprob %g", i, x, order[i], float64(logits[order[i]])-lse)
				}
			}
		})
	}
	t.Run("greedy tie rank", func(t *testing.T) {
		var s Sampler
		p := params(func(p *Params) { p.Temperature = 0; p.Logprobs = intp(2) })
		tok, lp := s.Sample(slices.Clone(logits), p, nil, nil, -1, nil)
		if tok != 10 || lp.Rank != 2 || lp.Top[0].Token != 10 || lp.Top[1].Token != 20 {
			t.Fatalf("tok %d, logprobs %+v; want token 10, rank 2 (vLLM counts ties), top 10 then 20", tok, lp)
		}
	})
}

func TestSampleAllocs(t *testing.T) {
	logits := randLogits(1, 32000, 6)
	tests := []struct {
		name string
		p    func(*Params)
	}{
		{"greedy", func(p *Params) { p.Temperature = 0 }},
		{"temperature", nil},
		{"top_k", func(p *Params) { p.TopK = 50 }},
		{"top_p", func(p *Params) { p.TopP = 0.9 }},
		{"penalties", func(p *Params) { p.RepetitionPenalty = 1.1; p.FrequencyPenalty = 0.5; p.PresencePenalty = 0.5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			p := params(tt.p)
			buf := make([]float32, len(logits))
			rng := NewRNG(1)
			prompt, output := []int32{1, 2, 3}, []int32{4, 4, 5}
			allocs := testing.AllocsPerRun(20, func() {
				copy(buf, logits)
				s.Sample(buf, p, prompt, output, 2, &rng)
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per Sample, want 0", allocs)
			}
		})
	}
}

func BenchmarkSample(b *testing.B) {
	for _, vocab := range []int{32000, 128256} {
		logits := randLogits(1, vocab, 8)
		for _, bc := range []struct {
			name string
			p    func(*Params)
		}{
			{"greedy", func(p *Params) { p.Temperature = 0 }},
			{"temperature", nil},
			{"top_k50", func(p *Params) { p.TopK = 50 }},
			{"top_p0.9", func(p *Params) { p.TopP = 0.9 }},
			{"top_k50_top_p0.9", func(p *Params) { p.TopK = 50; p.TopP = 0.9 }},
			{"min_p0.05", func(p *Params) { p.MinP = 0.05 }},
		} {
			b.Run(bc.name+"/vocab="+strconv.Itoa(vocab), func(b *testing.B) {
				var s Sampler
				p := params(bc.p)
				buf := make([]float32, vocab)
				rng := NewRNG(1)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				c0, ok := cputime.Thread()
				for b.Loop() {
					copy(buf, logits)
					s.Sample(buf, p, nil, nil, -1, &rng)
				}
				if c1, ok1 := cputime.Thread(); ok && ok1 {
					b.ReportMetric(float64((c1-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

func TestExpf(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float32
	}{
		{"softmax range", -87, 0},
		{"near zero", -1e-3, 1e-3},
		{"positive", 0, 88},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i <= 100000; i++ {
				x := tt.lo + (tt.hi-tt.lo)*float32(i)/100000
				got, want := float64(expf(x)), math.Exp(float64(x))
				if math.Abs(got-want) > 3e-7*want {
					t.Fatalf("expf(%g) = %g, want %g (rel err %.2g)", x, got, want, math.Abs(got-want)/want)
				}
			}
		})
	}
	for _, c := range []struct{ x, want float32 }{{ninf(), 0}, {-100, 0}, {0, 1}} {
		if got := expf(c.x); got != c.want {
			t.Errorf("expf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := expf(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %g, want NaN", got)
	}
}
