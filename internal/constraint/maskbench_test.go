package constraint

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"govllm/internal/testmodels"
	"govllm/internal/tokenizer"
)

var maskbenchFull = flag.Bool("maskbench.full", false, "TestMaskBench: score every schema of maskbench-dev.jsonl (default: the fixed CI subset)")

// maskbenchSubsetStride picks the CI subset: every 40th schema.
const maskbenchSubsetStride = 40

// ciMaskEvery: on the CI subset the whole mask is computed at every 16th
// token (see forceDecode); the full run computes it at every token.
const ciMaskEvery = 16

// benchCase is one line of maskbench-dev.jsonl.
type benchCase struct {
	ID     string          `json:"id"`
	Schema json.RawMessage `json:"schema"`
	Tests  []struct {
		Valid bool            `json:"valid"`
		Data  json.RawMessage `json:"data"`
	} `json:"tests"`
}

func loadMaskBench(tb testing.TB, full bool) []benchCase {
	f, err := os.Open(testmodels.Shared(tb, "structured/maskbench-dev.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []benchCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for i := 0; sc.Scan(); i++ {
		if !full && i%maskbenchSubsetStride != 0 {
			continue
		}
		var c benchCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var llama3 struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	m    *Matcher
	err  error
}

// llama3Matcher loads the Llama-3 tokenizer (128k tokens) from the shared
// folder and builds its Matcher once.
func llama3Matcher(tb testing.TB) (*tokenizer.Tokenizer, *Matcher) {
	dir := testmodels.Shared(tb, filepath.Join("models", "vocab", "hf-tokenizers", "llama-bpe"))
	llama3.once.Do(func() {
		llama3.tok, llama3.err = tokenizer.Load(dir, tokenizer.LoadOptions{})
		if llama3.err == nil {
			llama3.m, llama3.err = NewMatcher(TokenizerVocab{llama3.tok})
		}
	})
	if llama3.err != nil {
		tb.Fatal(llama3.err)
	}
	return llama3.tok, llama3.m
}

// benchScore is MaskBench's tally; validationErr and invalidationErr count
// schemas (with at least one such test), as the README's table does.
type benchScore struct {
	schemas, compileErr, validationErr, invalidationErr, passing int
	masks, masksCPU, ttfm                                        []time.Duration
	failures                                                     []string
}

// forceDecode feeds ids to a fresh state, checking each against the mask;
// it reports whether every token was allowed and the output could end.
// With every > 1 (the CI subset, under the race detector) the whole mask is
// computed at every every-th token only, and checked to agree with Allowed,
// which decides the other tokens.
func forceDecode(c *Constraint, m *Matcher, ids []int32, mask []uint64, sc *benchScore, every int) bool {
	s := c.newPrivateState(m) // the cold path: no transition or mask of another instance
	for i, id := range ids {
		if i%every != 0 {
			if !s.Allowed(id) {
				return false
			}
			if err := s.Advance(id); err != nil {
				panic(fmt.Sprintf("Allowed(%d) but Advance refused it: %v", id, err))
			}
			continue
		}
		t0 := time.Now()
		c0, cpuOK := threadCPU()
		s.Mask(mask)
		if sc != nil {
			sc.masks = append(sc.masks, time.Since(t0))
			if c1, _ := threadCPU(); cpuOK {
				sc.masksCPU = append(sc.masksCPU, c1-c0)
			}
		}
		if inMask := mask[id>>6]&(1<<(id&63)) != 0; inMask != s.Allowed(id) {
			panic(fmt.Sprintf("token %d: mask says %v, Allowed disagrees", id, inMask))
		} else if !inMask {
			return false
		}
		if err := s.Advance(id); err != nil {
			panic(fmt.Sprintf("mask allowed token %d but Advance refused it: %v", id, err))
		}
	}
	return s.IsAccepting()
}

// scoreCase compiles one schema and classifies its tests.
func scoreCase(tb testing.TB, bc *benchCase, tok *tokenizer.Tokenizer, m *Matcher, sc *benchScore, every int) {
	sc.schemas++
	t0 := time.Now()
	c, err := JSONSchema(bc.Schema, Options{})
	if err != nil {
		sc.compileErr++
		return
	}
	mask := make([]uint64, m.MaskWords())
	c.newPrivateState(m).Mask(mask)
	sc.ttfm = append(sc.ttfm, time.Since(t0))
	ok, valErr, invalErr := true, false, false
	defer func() {
		if valErr {
			sc.validationErr++
		}
		if invalErr {
			sc.invalidationErr++
		}
		if ok {
			sc.passing++
		}
	}()
	for i, t := range bc.Tests {
		doc, err := CompactJSON(t.Data)
		if err != nil {
			tb.Fatalf("%s test %d: %v", bc.ID, i, err)
		}
		ids := tok.Encode(string(doc), false)
		accepted := forceDecode(c, m, ids, mask, map[bool]*benchScore{true: sc}[t.Valid], every)
		if accepted != t.Valid {
			ok = false
			kind := map[bool]string{true: "validation", false: "INVALIDATION"}[t.Valid]
			sc.failures = append(sc.failures, fmt.Sprintf("%s error: %s test %d: %.200s", kind, bc.ID, i, doc))
			valErr, invalErr = valErr || t.Valid, invalErr || !t.Valid
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// TestMaskBench scores the constraint on MaskBench's dev sample as its
// README describes. CI runs a fixed subset; the full set:
//
//	go test ./internal/constraint -run TestMaskBench -v -timeout 60m -args -maskbench.full
func TestMaskBench(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tok, m := llama3Matcher(t)
	cases := loadMaskBench(t, *maskbenchFull)
	every := ciMaskEvery
	if *maskbenchFull {
		every = 1
	}
	var sc benchScore
	for i := range cases {
		scoreCase(t, &cases[i], tok, m, &sc, every)
	}
	for _, f := range sc.failures {
		t.Log(f)
	}
	t.Logf("| schemas | compiled | passing | compile error | validation err. | invalidation err. | TBM p50 / p99 (µs) | TBM CPU p50 / p99 (µs) | TTFM p50 (µs) |")
	t.Logf("| %d | %d | %d | %d | %d | %d | %d / %d | %d / %d | %d |", sc.schemas, sc.schemas-sc.compileErr, sc.passing,
		sc.compileErr, sc.validationErr, sc.invalidationErr,
		percentile(sc.masks, 0.5).Microseconds(), percentile(sc.masks, 0.99).Microseconds(),
		percentile(sc.masksCPU, 0.5).Microseconds(), percentile(sc.masksCPU, 0.99).Microseconds(),
		percentile(sc.ttfm, 0.5).Microseconds())
	if sc.invalidationErr > 0 {
		t.Errorf("%d invalidation errors (an invalid instance accepted): the grammar is looser than the schema", sc.invalidationErr)
	}
	if limit := sc.schemas / 200; sc.validationErr > limit {
		t.Errorf("%d validation errors, above 0.5%% of %d schemas", sc.validationErr, sc.schemas)
	}
}
