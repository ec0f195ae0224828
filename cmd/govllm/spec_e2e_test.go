package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"govllm/internal/testmodels"
)

const specK = 4

// specFamilies are vLLM's speculative-decoding counters.
var specFamilies = []string{
	"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
}

// logSpec matches vLLM's SpecDecoding log line.
var logSpec = regexp.MustCompile(`SpecDecoding metrics: Mean acceptance length: [0-9.]+, Accepted throughput: [0-9.]+ tokens/s, ` +
	`Drafted throughput: [0-9.]+ tokens/s, Accepted: (\d+) tokens, Drafted: (\d+) tokens, Per-position acceptance rate: ([0-9., ]+), ` +
	`Avg Draft acceptance rate: [0-9.]+%`)

// TestSpeculativeServing drives the real server with
// --speculative-config over HTTP (stories260K) and scrapes /metrics: a
// fresh server exposes vLLM's four spec-decode counters at 0 (positions 0…k-1);
// after greedy completions and a JSON-schema request they count the
// drafts (accepted ≤ drafted, the positions sum to the accepted tokens
// and never grow with the position), the generation tokens are the
// responses' completion tokens, the periodic log lines count the same
// tokens, and every output equals that of a server without speculation,
// which exposes none of the families.
func TestSpeculativeServing(t *testing.T) {
	noLeaks(t)
	reqs := []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"Once upon a time, there was a little girl. Once upon a time, there was","max_tokens":48,"temperature":0,"ignore_eos":true}`},
		{"/v1/completions", `{"prompt":"Lily and Ben went to the park. Lily and Ben","max_tokens":40,"temperature":0.8,"seed":3,"ignore_eos":true}`},
		{"/v1/completions", `{"prompt":"Tom is","max_tokens":200,"temperature":0,"structured_outputs":{"json":` + personSchema + `}}`},
	}
	run := func(t *testing.T, spec string) (outs []string, completion int, sc *scraper, logs *syncBuffer, stop func() error) {
		logs = &syncBuffer{}
		cfg := testServeConfig()
		cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
		cfg.LogStatsInterval = 50 * time.Millisecond
		cfg.SpeculativeConfig = spec
		url, stop := startServeLog(t, cfg, slog.New(slog.NewTextHandler(logs, nil)))
		sc = &scraper{url: url, hc: http.DefaultClient}
		for _, r := range reqs {
			res := post(t, url, r.path, r.body)
			if res.status != 200 {
				t.Fatalf("%s: %d %s", r.path, res.status, res.body)
			}
			var body struct {
				Choices []struct {
					Text    string
					Message struct{ Content string }
				}
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				}
			}
			if err := json.Unmarshal([]byte(res.body), &body); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, body.Choices[0].Text+body.Choices[0].Message.Content)
			completion += body.Usage.CompletionTokens
		}
		return outs, completion, sc, logs, stop
	}
	plain, _, plainSc, _, stopPlain := run(t, "")
	for _, f := range specFamilies {
		if s := plainSc.scrape(t); len(s.series(f)) != 0 {
			t.Fatalf("a server without --speculative-config exposes %s", f)
		}
	}
	if err := stopPlain(); err != nil {
		t.Fatal(err)
	}

	gguf := filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	for _, spec := range []string{
		fmt.Sprintf(`{"method":"ngram","num_speculative_tokens":%d,"prompt_lookup_max":3,"prompt_lookup_min":1}`, specK),
		fmt.Sprintf(`{"model":%q,"num_speculative_tokens":%d}`, gguf, specK),
	} {
		t.Run(spec, func(t *testing.T) { checkSpecServer(t, run, spec, plain) })
	}
}

// checkSpecServer runs the workload on a server with --speculative-config
// spec and checks its outputs, /metrics and log lines.
func checkSpecServer(t *testing.T, run func(*testing.T, string) ([]string, int, *scraper, *syncBuffer, func() error), spec string, plain []string) {
	outs, completion, sc, logs, stop := run(t, spec)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	for i := range outs {
		if outs[i] != plain[i] {
			t.Errorf("request %d: %q with speculation, %q without", i, outs[i], plain[i])
		}
	}
	s := sc.await(t, "spec-decode counters", 10*time.Second, func(s *scrape) []check {
		return []check{eq("generation tokens", s.sum("vllm:generation_tokens_total"), float64(completion))}
	})
	perPos := s.series("vllm:spec_decode_num_accepted_tokens_per_pos_total")
	if len(perPos) != specK {
		t.Fatalf("%d per-position series, want %d", len(perPos), specK)
	}
	drafts, draftToks, accepted := s.sum(specFamilies[0]), s.sum(specFamilies[1]), s.sum(specFamilies[2])
	prev, sum := drafts, 0.0
	for p := range specK {
		v := s.sum("vllm:spec_decode_num_accepted_tokens_per_pos_total", "position", strconv.Itoa(p))
		if v > prev {
			t.Fatalf("position %d accepted %g, more than position %d's %g", p, v, p-1, prev)
		}
		prev, sum = v, sum+v
	}
	if drafts == 0 || accepted == 0 || accepted > draftToks || draftToks > specK*drafts || sum != accepted {
		t.Fatalf("drafts %g, draft tokens %g, accepted %g, per-position sum %g", drafts, draftToks, accepted, sum)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var acc, drafted int
		for _, m := range logSpec.FindAllStringSubmatch(logs.String(), -1) {
			a, _ := strconv.Atoi(m[1])
			d, _ := strconv.Atoi(m[2])
			acc, drafted = acc+a, drafted+d
		}
		if float64(acc) == accepted && float64(drafted) == draftToks {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log lines count %d accepted of %d drafted, /metrics %g of %g:\n%s", acc, drafted, accepted, draftToks, logs.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}
