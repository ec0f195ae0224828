package constraint

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"
)

var maskSlow = flag.Int("maskbench.slow", 0, "TestMaskSlowest: list the N slowest masks (schema, position, nodes walked, new sets)")

// slowMask is one mask's cost, for TestMaskSlowest.
type slowMask struct {
	cpu        time.Duration
	id         string
	pos, nodes int
	newSets    int
	text       bool
	prefix     string
}

// TestMaskSlowest lists the slowest masks of the valid instances (every
// schema with -maskbench.full), to see what the p99 is made of:
//
//	go test ./internal/constraint -run TestMaskSlowest -v -timeout 60m -args -maskbench.full -maskbench.slow 200
func TestMaskSlowest(t *testing.T) {
	if *maskSlow == 0 {
		t.Skip("-maskbench.slow not set")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tok, m := llama3Matcher(t)
	var all []slowMask
	mask := make([]uint64, m.MaskWords())
	for _, bc := range loadMaskBench(t, *maskbenchFull) {
		c, err := JSONSchema(bc.Schema, Options{})
		if err != nil {
			continue
		}
		for _, tc := range bc.Tests {
			if !tc.Valid {
				continue
			}
			doc, _ := CompactJSON(tc.Data)
			ids := tok.Encode(string(doc), false)
			s := c.newPrivateState(m)
			var out []byte
			for i, id := range ids {
				sets, walked := len(s.a.sets), s.a.walked
				kind := "other"
				if n := len(out); n >= 2 && out[n-1] == '"' && (out[n-2] == '{' || out[n-2] == ',') {
					kind = "keystart"
				}
				var c0, c1 time.Duration
				pprof.Do(context.Background(), pprof.Labels("mask", kind), func(context.Context) {
					c0, _ = threadCPU()
					s.Mask(mask)
					c1, _ = threadCPU()
				})
				_, _, text := s.a.textReach(s.cur, m.maxTextChars())
				all = append(all, slowMask{cpu: c1 - c0, id: bc.ID, pos: i, nodes: int(s.a.walked - walked),
					newSets: len(s.a.sets) - sets, text: text, prefix: string(out[max(0, len(out)-60):])})
				if s.Advance(id) != nil {
					break
				}
				out = append(out, m.tokens[id]...)
			}
		}
	}
	slices.SortFunc(all, func(a, b slowMask) int { return int(b.cpu - a.cpu) })
	t.Logf("%d masks; p50 %v p99 %v", len(all), all[len(all)/2].cpu, all[len(all)/100].cpu)
	for _, s := range all[:min(len(all), *maskSlow)] {
		t.Logf("%6dµs %-40s pos %4d nodes %7d new %5d text %v  %q", s.cpu.Microseconds(), s.id, s.pos, s.nodes, s.newSets, s.text, s.prefix)
	}
	if f, err := os.Create(filepath.Join(os.TempDir(), "maskslow.tsv")); err == nil {
		for _, s := range all {
			if s.cpu < 300*time.Microsecond {
				break
			}
			fmt.Fprintf(f, "%d\t%s\t%d\t%d\t%d\t%v\t%q\n", s.cpu.Microseconds(), s.id, s.pos, s.nodes, s.newSets, s.text, s.prefix)
		}
		f.Close()
	}
	p99 := all[len(all)/100].cpu
	var nodes, sets, text, first int
	n := 0
	for _, s := range all {
		if s.cpu < p99 {
			break
		}
		n++
		nodes += s.nodes
		sets += s.newSets
		if s.text {
			text++
		}
		if s.pos == 0 {
			first++
		}
	}
	t.Log(fmt.Sprintf("top 1%% (%d masks): mean nodes %d, mean new sets %d, text-reach %d, first masks %d", n, nodes/n, sets/n, text, first))
}
