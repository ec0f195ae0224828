package main

import (
	"encoding/json"
	"fmt"
	"govllm/internal/sampling"
	"os"
	"path/filepath"
)

// loadGenerationConfig returns the default sampling parameters: vLLM's
// built-ins overlaid with generation_config.json's temperature, top_p,
// top_k, min_p and repetition_penalty ("auto": MODEL's file when present;
// "vllm": built-ins only; else a file or directory path).
func loadGenerationConfig(cfg serveConfig) (*sampling.Params, error) {
	p := sampling.Default()
	var path string
	switch cfg.GenerationConfig {
	case "vllm", "":
		return &p, nil
	case "auto":
		if cfg.Model == "" {
			return &p, nil
		}
		dir := cfg.Model
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			dir = filepath.Dir(dir)
		}
		path = filepath.Join(dir, "generation_config.json")
		if _, err := os.Stat(path); err != nil {
			return &p, nil
		}
	default:
		path = cfg.GenerationConfig
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, "generation_config.json")
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--generation-config: %w", err)
	}
	var g struct {
		Temperature       *float32 `json:"temperature"`
		TopP              *float32 `json:"top_p"`
		TopK              *int     `json:"top_k"`
		MinP              *float32 `json:"min_p"`
		RepetitionPenalty *float32 `json:"repetition_penalty"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("--generation-config %s: %w", path, err)
	}
	set := func(dst *float32, v *float32) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.Temperature, g.Temperature)
	set(&p.TopP, g.TopP)
	set(&p.MinP, g.MinP)
	set(&p.RepetitionPenalty, g.RepetitionPenalty)
	if g.TopK != nil {
		p.TopK = *g.TopK
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("--generation-config %s: %w", path, err)
	}
	return &p, nil
}
