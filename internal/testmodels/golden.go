package testmodels

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Golden is one greedy golden run of stories260K from the reference
// implementation (shared/models/stories260K/golden/<name>.ids): one line per
// forward step, "input next"; while the prompt is fed, next is the forced
// next prompt token.
type Golden struct {
	Name        string
	Prompt      string  // the prompt text (<name>.prompt)
	Input, Next []int32 // per step; position = step index
	PromptLen   int     // prompt ids, BOS included
}

// goldenPromptLen is the number of prompt ids of each case (BOS included), as
// the golden files' README lists them.
var goldenPromptLen = map[string]int{"once_upon_a_time": 5, "bytes_fallback": 16}

// GoldenNames lists the golden cases.
var GoldenNames = []string{"once_upon_a_time", "bytes_fallback"}

// PromptIDs returns the prompt's token ids, BOS first.
func (g *Golden) PromptIDs() []int32 { return g.Input[:g.PromptLen] }

// Continuation returns the greedy tokens generated after the prompt.
func (g *Golden) Continuation() []int32 { return g.Next[g.PromptLen-1:] }

// LoadGolden reads one golden case of stories260K (skipping the test loudly
// when the shared models are absent). A malformed file fails the test.
func LoadGolden(tb testing.TB, name string) *Golden {
	tb.Helper()
	g, err := readGolden(filepath.Join(Dir(tb, "stories260K"), "golden"), name)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func readGolden(dir, name string) (*Golden, error) {
	n, ok := goldenPromptLen[name]
	if !ok {
		return nil, fmt.Errorf("testmodels: unknown golden case %q", name)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, name+".prompt"))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name+".ids")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &Golden{Name: name, Prompt: strings.TrimSuffix(string(prompt), "\n"), PromptLen: n}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want two ids, got %q", path, line, sc.Text())
		}
		in, err1 := strconv.ParseInt(fields[0], 10, 32)
		next, err2 := strconv.ParseInt(fields[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: bad ids %q", path, line, sc.Text())
		}
		g.Input, g.Next = append(g.Input, int32(in)), append(g.Next, int32(next))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(g.Input) < n {
		return nil, fmt.Errorf("%s: %d steps, shorter than the %d-token prompt", path, len(g.Input), n)
	}
	return g, nil
}
