package sched_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"govllm/internal/kvcache"
	"govllm/internal/sched"
	"govllm/internal/stats"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the scenario scripts in testdata: each block is a
// command, a "----" line, and the expected output, separated by a blank
// line (the layout of etcd raft's testdata). Run with -rewrite to update
// them, then review the diff.
//
//	config blocks=6 block_size=4 budget=24 seqs=4 model_len=24 policy=fcfs [chunked=false] [threshold=N] [prefix=false]
//	add id=a prompt=4 [base=0] max_tokens=8 [prio=0] [eos_after=K]
//	step [n]     print each step's plan, outputs and stats
//	run          step until idle, print a summary
//	abort a b    abort requests
//	state        every request's status, computed tokens, preemptions; KV blocks
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

type scriptBlock struct {
	cmd, want string
}

func parseScript(t *testing.T, src string) (header string, blocks []scriptBlock) {
	lines := strings.Split(src, "\n")
	i := 0
	var hdr []string
	for ; i < len(lines) && (strings.HasPrefix(lines[i], "#") || lines[i] == ""); i++ {
		hdr = append(hdr, lines[i])
	}
	header = strings.TrimRight(strings.Join(hdr, "\n"), "\n")
	for i < len(lines) {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		cmd := lines[i]
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("line %d: command %q not followed by ----", i, cmd)
		}
		i++
		var want []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			want = append(want, lines[i])
		}
		blocks = append(blocks, scriptBlock{cmd, strings.Join(want, "\n")})
	}
	return header, blocks
}

func runScript(t *testing.T, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, blocks := parseScript(t, string(src))
	var out strings.Builder
	if header != "" {
		out.WriteString(header + "\n\n")
	}
	sc := &scriptRun{t: t}
	for _, b := range blocks {
		got := strings.TrimRight(sc.exec(b.cmd), "\n")
		if !*rewrite && got != b.want {
			t.Errorf("%s\n----\ngot:\n%s\nwant:\n%s", b.cmd, got, b.want)
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", b.cmd, got)
	}
	if sc.h != nil && !*rewrite && !t.Failed() {
		sc.h.run()
		sc.h.checkDrained()
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type scriptRun struct {
	t     *testing.T
	h     *harness
	order []sched.RequestID
}

func kvArgs(t *testing.T, fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("argument %q is not key=value", f)
		}
		m[k] = v
	}
	return m
}

func atoi(t *testing.T, m map[string]string, k string, def int) int {
	v, ok := m[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, v, err)
	}
	return n
}

func (sc *scriptRun) exec(line string) string {
	t := sc.t
	fields := strings.Fields(line)
	switch fields[0] {
	case "config":
		a := kvArgs(t, fields[1:])
		o := defaultOpts()
		o.kv = kvcache.Config{NumBlocks: atoi(t, a, "blocks", 64), BlockSize: atoi(t, a, "block_size", 4), EnablePrefixCaching: a["prefix"] != "false"}
		o.sched.MaxNumBatchedTokens = atoi(t, a, "budget", 64)
		o.sched.MaxNumSeqs = atoi(t, a, "seqs", 8)
		o.sched.MaxModelLen = atoi(t, a, "model_len", 64)
		o.sched.LongPrefillTokenThreshold = atoi(t, a, "threshold", 0)
		o.sched.EnableChunkedPrefill = a["chunked"] != "false"
		if p, ok := a["policy"]; ok {
			var err error
			if o.sched.Policy, err = sched.ParsePolicy(p); err != nil {
				t.Fatal(err)
			}
		}
		sc.h = newHarness(t, o)
		return "ok"
	case "add":
		a := kvArgs(t, fields[1:])
		id := sched.RequestID(a["id"])
		r := sched.EngineRequest{
			ID:             id,
			PromptTokenIDs: prompt(atoi(t, a, "base", 0), atoi(t, a, "prompt", 4)),
			Params:         params(atoi(t, a, "max_tokens", 4)),
			EOSTokenID:     -1,
			Priority:       atoi(t, a, "prio", 0),
		}
		if err := sc.h.s.AddRequest(r); err != nil {
			return "error: " + err.Error()
		}
		sc.order = append(sc.order, id)
		return fmt.Sprintf("queued %s", id)
	case "step":
		n := 1
		if len(fields) > 1 {
			n, _ = strconv.Atoi(fields[1])
		}
		var b strings.Builder
		for range n {
			plan, outs := sc.h.step()
			fmt.Fprintf(&b, "step %d: %s\n", len(sc.h.plans), plan)
			for _, o := range outs.Outputs {
				b.WriteString("  " + fmtOutput(o) + "\n")
			}
			b.WriteString("  " + fmtStats(outs.SchedulerStats) + "\n")
		}
		return b.String()
	case "run":
		start := len(sc.h.plans)
		sc.h.run()
		var b strings.Builder
		fmt.Fprintf(&b, "%d steps\n", len(sc.h.plans)-start)
		for _, id := range sc.order {
			f := sc.h.finished[id]
			fmt.Fprintf(&b, "%s: %d tokens, %v, events %v\n", id, len(sc.h.tokens[id]), f.FinishReason, eventNames(sc.h.events[id]))
		}
		return b.String()
	case "abort":
		var ids []sched.RequestID
		for _, f := range fields[1:] {
			ids = append(ids, sched.RequestID(f))
		}
		sc.h.s.Abort(ids...)
		return fmt.Sprintf("free blocks %d/%d", sc.h.kv.NumFreeBlocks(), sc.h.kv.NumBlocks())
	case "state":
		var b strings.Builder
		for _, id := range sc.order {
			r, ok := sc.h.s.Request(id)
			if !ok {
				fmt.Fprintf(&b, "%s: gone\n", id)
				continue
			}
			fmt.Fprintf(&b, "%s: %v computed=%d/%d preemptions=%d blocks=%v\n", id, r.Status, r.NumComputedTokens,
				r.NumTokens(), r.NumPreemptions, sc.h.kv.BlockTable(string(id)))
		}
		fmt.Fprintf(&b, "free blocks %d/%d, cached %d", sc.h.kv.NumFreeBlocks(), sc.h.kv.NumBlocks(), sc.h.kv.NumCachedBlocks())
		return b.String()
	}
	t.Fatalf("unknown command %q", line)
	return ""
}

func eventNames(evs []stats.Event) []string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type.String())
	}
	return s
}

func fmtOutput(o sched.CoreOutput) string {
	s := fmt.Sprintf("out %s +%d", o.ReqID, len(o.NewTokenIDs))
	if o.FinishReason != stats.FinishNone {
		s += " finish=" + o.FinishReason.String()
	}
	if len(o.Events) > 0 {
		s += fmt.Sprintf(" events=%v", eventNames(o.Events))
	}
	if p := o.PrefillStats; p != nil {
		s += fmt.Sprintf(" prefill=%d/cached=%d", p.NumPromptTokens, p.NumCachedTokens)
	}
	return s
}

func fmtStats(s *stats.SchedulerStats) string {
	p := s.PrefixCacheStats
	out := fmt.Sprintf("stats running=%d waiting=%d kv=%.3f", s.NumRunningReqs, s.NumWaitingReqs, s.KVCacheUsage)
	if p.Requests > 0 {
		out += fmt.Sprintf(" prefix=%dreq/%dq/%dhit", p.Requests, p.Queries, p.Hits)
	}
	if p.PreemptedRequests > 0 {
		out += fmt.Sprintf(" preempted_prefix=%dreq/%dq/%dhit", p.PreemptedRequests, p.PreemptedQueries, p.PreemptedHits)
	}
	return out
}
