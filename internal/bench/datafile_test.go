package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// byteTokens counts one token per byte, plus BOS when special.
func byteTokens(_ context.Context, text string, special bool) ([]int32, error) {
	ids := make([]int32, len(text))
	if special {
		ids = append(ids, 1)
	}
	return ids, nil
}

// TestShareGPTDataset follows vLLM's ShareGPTDataset: entries of one turn
// are dropped, sequences is_valid_sequence refuses are skipped, the output
// length is the completion's unless given, the file order is kept with
// --disable-shuffle, and too few prompts are oversampled unless
// --no-oversample.
func TestShareGPTDataset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	data := `[
	 {"conversations": [{"from": "human", "value": "first prompt"}, {"from": "gpt", "value": "an answer"}]},
	 {"conversations": [{"from": "human", "value": "only one turn"}]},
	 {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "a prompt too short"}]},
	 {"conversations": [{"from": "human", "value": "second prompt"}, {"from": "gpt", "value": "ok"}]},
	 {"conversations": [{"from": "human", "value": "third prompt"}, {"from": "gpt", "value": "the third answer"}]}]`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		texts   []string // in order; "" = any
		outLens []int
	}{
		// "second prompt" has a completion of 3 tokens ("ok" + BOS): too short.
		{"file order", Config{NumPrompts: 2, DisableShuffle: true}, []string{"first prompt", "third prompt"}, []int{10, 17}},
		{"fixed output length keeps short completions", Config{NumPrompts: 3, DisableShuffle: true, OutputLen: 7},
			[]string{"first prompt", "second prompt", "third prompt"}, []int{7, 7, 7}},
		{"oversampled", Config{NumPrompts: 5, DisableShuffle: true}, []string{"first prompt", "third prompt", "", "", ""}, []int{10, 17, 0, 0, 0}},
		{"not oversampled", Config{NumPrompts: 5, DisableShuffle: true, NoOversample: true}, []string{"first prompt", "third prompt"}, []int{10, 17}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.DatasetName, cfg.DatasetPath = "sharegpt", path
			prompts, err := makeDataset(context.Background(), &cfg, byteTokens)
			if err != nil {
				t.Fatal(err)
			}
			if len(prompts) != len(tc.texts) {
				t.Fatalf("%d prompts, want %d: %+v", len(prompts), len(tc.texts), prompts)
			}
			for i, p := range prompts {
				if tc.texts[i] != "" && (p.Text != tc.texts[i] || p.OutputLen != tc.outLens[i]) {
					t.Errorf("prompt %d: %q asking %d tokens, want %q asking %d", i, p.Text, p.OutputLen, tc.texts[i], tc.outLens[i])
				}
				if p.InputLen != len(p.Text)+1 || p.Text == "only one turn" || p.Text == "hi" {
					t.Errorf("prompt %d: %q of %d tokens", i, p.Text, p.InputLen)
				}
			}
		})
	}
}
