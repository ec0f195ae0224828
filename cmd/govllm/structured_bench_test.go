package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// peopleSchema is an array of at least 40 people: no output of 128 tokens
// completes it, so every constrained request generates exactly max_tokens
// tokens, as the unconstrained ones do with ignore_eos.
const peopleSchema = `{"type":"array","items":` + personSchema + `,"minItems":40}`

// BenchmarkStructuredServing measures the serving cost of structured
// outputs: waves of 16 concurrent completions of 128 tokens each against
// a real server on the built-in model at its default shape and engine
// settings, unconstrained (ignore_eos) and under a JSON Schema, the two
// kinds of wave alternating in the same server (paired). It reports each
// kind's generated tok/s and tokens per CPU-second of the process (server
// and client; steadier on a shared machine), and their ratios.
//
//	go test ./cmd/govllm -run '^$' -bench BenchmarkStructuredServing -benchtime 6x
func BenchmarkStructuredServing(b *testing.B) {
	cfg := defaultServeConfig()
	cfg.DisableLogRequests = true
	url, stop := startServe(b, cfg)
	defer stop()
	prompt := strings.Repeat("Once upon a time there was a little dog. ", 8)
	const streams, tokens = 16, 128
	modes := []string{`"ignore_eos":true`,
		`"response_format":{"type":"json_schema","json_schema":{"name":"people","schema":` + peopleSchema + `}}`}
	var wall, cpu [2]time.Duration
	wave := func(mode, seed int) {
		t0, c0 := time.Now(), processCPU(b)
		var wg sync.WaitGroup
		errs := make(chan error, streams)
		for i := range streams {
			wg.Go(func() {
				body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"temperature":1,"seed":%d,%s}`, prompt, tokens, seed*streams+i, modes[mode])
				errs <- completionTokens(url, body, tokens)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		wall[mode] += time.Since(t0)
		cpu[mode] += processCPU(b) - c0
	}
	wave(1, -1) // warm-up: the constraint is compiled once per server
	wall, cpu = [2]time.Duration{}, [2]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		wave(i%2, i)
		wave(1-i%2, i)
	}
	n := float64(streams * tokens * b.N)
	b.ReportMetric(n/wall[0].Seconds(), "unconstrained-tok/s")
	b.ReportMetric(n/wall[1].Seconds(), "json_schema-tok/s")
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "tok/s-ratio")
	b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "tok/CPU-s-ratio")
}

// processCPU is the process's user and system CPU time so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// completionTokens posts a completion and checks it generated want tokens.
func completionTokens(url, body string, want int) error {
	r, err := postRaw(url+"/v1/completions", body)
	if err != nil {
		return err
	}
	var resp struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(r, &resp); err != nil || resp.Usage.CompletionTokens != want {
		return fmt.Errorf("%v: %s (want %d completion tokens)", err, r, want)
	}
	return nil
}

// postRaw posts a JSON body and returns the reply's body (an error for a
// status other than 200).
func postRaw(url, body string) ([]byte, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return b, err
}
