package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"govllm/internal/bench"
)

// runBench dispatches `govllm bench <sub>`; only `serve` exists (vLLM's
// `vllm bench serve`).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "serve" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(stdout, "Usage: govllm bench serve [flags]\n\nRun 'govllm bench serve --help' for the flags.")
			return nil
		}
		fmt.Fprintln(stderr, "Usage: govllm bench serve [flags]")
		return errUsage
	}
	return runBenchServe(ctx, args[1:], stdout, stderr)
}

func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, outs, err := parseBenchArgs(args, stderr)
	if err != nil {
		return err
	}
	if outs.insecure {
		tr := &http.Transport{MaxIdleConnsPerHost: 1024, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		defer tr.CloseIdleConnections()
		cfg.HTTPClient = &http.Client{Transport: tr}
	}
	if _, ok := cfg.ExtraBody["temperature"]; !ok {
		fmt.Fprintln(stderr, "govllm bench serve: note: like vllm bench serve, no temperature is sent (the server's default applies); pass --temperature=0 for greedy decoding")
	}
	rate := "inf"
	if !math.IsInf(cfg.RequestRate, 1) {
		rate = strconv.FormatFloat(cfg.RequestRate, 'g', -1, 64)
	}
	fmt.Fprintf(stderr, "benchmarking %s%s: %s dataset, %d prompts, rate %s, max concurrency %d\n",
		cfg.BaseURL, cfg.Endpoint, cfg.DatasetName, cfg.NumPrompts, rate, cfg.MaxConcurrency)
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return reportBench(res, &cfg, outs, stdout, stderr)
}

// resultFileName is vLLM's default result file name:
// <label>-<rate>qps[-concurrency<n>]-<model>-<date>.json, or with a ramp-up
// <label>-ramp-up-<strategy>-<start>qps-<end>qps[…]-<model>-<date>.json.
func resultFileName(res *bench.Result, cfg *bench.Config) string {
	label := cmp.Or(cfg.Label, cfg.Backend)
	conc := ""
	if cfg.MaxConcurrency > 0 {
		conc = fmt.Sprintf("-concurrency%d", cfg.MaxConcurrency)
	}
	model := res.ModelID[strings.LastIndex(res.ModelID, "/")+1:]
	if cfg.RampUpStrategy != "" {
		return fmt.Sprintf("%s-ramp-up-%s-%sqps-%sqps%s-%s-%s.json", label, cfg.RampUpStrategy,
			pyFloat(cfg.RampUpStartRPS), pyFloat(cfg.RampUpEndRPS), conc, model, res.Date)
	}
	return fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, pyFloat(cfg.RequestRate), conc, model, res.Date)
}

// pyFloat spells v as Python's str(float) does for the values a rate
// takes: inf, 10.0, 2.5.
func pyFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e16:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// reportBench prints the result table and writes the requested files.
func reportBench(res *bench.Result, cfg *bench.Config, outs benchOutputs, stdout, stderr io.Writer) error {
	res.WriteTable(stdout)
	res.Detailed = outs.saveDetailed
	for _, kv := range outs.metadata {
		k, v, _ := strings.Cut(kv, "=")
		if res.Metadata == nil {
			res.Metadata = map[string]string{}
		}
		res.Metadata[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if outs.saveResult || outs.appendResult {
		path := cmp.Or(outs.fileName, resultFileName(res, cfg))
		if outs.resultDir != "" {
			if err := os.MkdirAll(outs.resultDir, 0o755); err != nil {
				return err
			}
			path = filepath.Join(outs.resultDir, path)
		}
		if err := res.SaveJSON(path, outs.appendResult); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "result saved to %s\n", path)
	}
	if outs.plot != "" {
		if err := res.SavePlot(outs.plot); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "plot saved to %s\n", outs.plot)
	}
	if res.Failed > 0 && res.Completed == 0 {
		return fmt.Errorf("all %d requests failed; first error: %s", res.Failed, res.Errors[0])
	}
	if outs.verify && res.CheckError != "" {
		return fmt.Errorf("--verify-metrics: no cross-check: %s", res.CheckError)
	}
	if outs.verify && !res.MetricsOK() {
		return errors.New("the server's /metrics disagree with the client's measurements (see the cross-check above)")
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
