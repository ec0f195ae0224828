package main

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"

	"govllm/internal/core"
	"govllm/internal/model"
	"govllm/internal/runner"
	"govllm/internal/tensor"
	"govllm/internal/tokenizer"
)

// engineParts is an engine core built from an engineConfig: the one loader
// and wiring serve and generate share. Close releases the thread pool.
type engineParts struct {
	Model  *model.Model
	Tok    *tokenizer.Tokenizer
	Core   *core.Engine
	Config resolvedConfig
	pool   *tensor.Pool
}

// buildEngine loads the model and tokenizer, resolves cfg against the
// model, and wires the thread pool, the runner and the core. wrap, when
// set, wraps the runner the core executes (tests inject faults with it).
func buildEngine(cfg engineConfig, logger *slog.Logger, wrap func(core.Executor) core.Executor) (p *engineParts, err error) {
	m, tok, err := loadModel(cfg, logger)
	if err != nil {
		return nil, err
	}
	rc, err := cfg.resolve(m.Config)
	if err != nil {
		return nil, err
	}
	pool, perr := tensor.NewPoolWith(rc.Threads, tensor.PoolOptions{Nice: rc.EngineNice})
	switch {
	case errors.Is(perr, tensor.ErrNiceUnsupported):
		logger.Info("the forward pass runs at normal priority", "engine_nice", rc.EngineNice, "reason", perr)
	case perr != nil:
		logger.Warn("the forward pass runs at normal priority", "engine_nice", rc.EngineNice, "err", perr)
	}
	p = &engineParts{Model: m, Tok: tok, Config: rc, pool: pool}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	run, err := runner.New(m, pool, rc.Runner(tok.EOS()))
	if err != nil {
		return nil, err
	}
	if err := p.loadDraftModel(logger); err != nil {
		return nil, err
	}
	var exec core.Executor = run
	if wrap != nil {
		exec = wrap(exec)
	}
	if p.Core, err = core.New(p.Config.Core(), exec); err != nil {
		return nil, err
	}
	return p, nil
}

// loadDraftModel loads --speculative-config's draft model, when it names
// one, and makes it the drafter: same vocabulary as the target, its own
// KV cache of as many token slots as the target's.
func (p *engineParts) loadDraftModel(logger *slog.Logger) error {
	rc := &p.Config
	if rc.Spec == nil || rc.Spec.Model == "" {
		return nil
	}
	dm, err := model.Load(rc.Spec.Model, model.LoadOptions{})
	if err != nil {
		return fmt.Errorf("--speculative-config: draft model: %w", err)
	}
	if dm.Config.VocabSize != p.Model.Config.VocabSize {
		return fmt.Errorf("--speculative-config: the draft model has %d tokens, the model %d: they must share the vocabulary",
			dm.Config.VocabSize, p.Model.Config.VocabSize)
	}
	d, err := runner.NewDraftModel(dm, p.pool, runner.DraftConfig{NumBlocks: rc.NumBlocks, BlockSize: rc.BlockSize, Chunk: min(rc.MaxNumBatchedTokens, 512), KVCacheDType: rc.KVCodec})
	if err != nil {
		return err
	}
	rc.Drafter = d
	logger.Info("speculative decoding with a draft model", "model", rc.Spec.Model, "params", dm.Config.NumParams(),
		"num_speculative_tokens", rc.Spec.NumSpeculativeTokens, "kv_bytes", int64(rc.NumBlocks*rc.BlockSize)*int64(dm.Config.KVBytesPerToken(rc.KVCodec)))
	return nil
}

// Close stops the thread pool.
func (p *engineParts) Close() {
	if p.pool != nil {
		p.pool.Close()
	}
}

// loadModel returns the model and tokenizer per --load-format.
func loadModel(cfg engineConfig, logger *slog.Logger) (*model.Model, *tokenizer.Tokenizer, error) {
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	if cfg.Model == "" {
		return dummyModel(cfg, logger)
	}
	m, err := model.Load(cfg.Model, model.LoadOptions{Quantize: cfg.Quantization})
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.Load(cfg.Model, tokenizer.LoadOptions{TokenizerPath: cfg.Tokenizer})
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer: %w (a llama2.c checkpoint needs --tokenizer tok512.bin)", err)
	}
	if tok.VocabSize() > m.Config.VocabSize {
		return nil, nil, fmt.Errorf("the tokenizer has %d tokens, the model only %d", tok.VocabSize(), m.Config.VocabSize)
	}
	if tok.VocabSize() < m.Config.VocabSize {
		logger.Warn("the model has more token rows than the tokenizer has tokens", "tokenizer", tok.VocabSize(), "model", m.Config.VocabSize)
	}
	return m, tok, nil
}

// dummyModel is the built-in random-weight model of --dummy-shape, with a
// byte-level vocabulary, or with --tokenizer's vocabulary and as many
// token rows as it has tokens (as vLLM's dummy format keeps the real
// config), so that /tokenize can be checked for any tokenizer.
func dummyModel(cfg engineConfig, logger *slog.Logger) (*model.Model, *tokenizer.Tokenizer, error) {
	mc, err := model.DummyConfig(cfg.DummyShape)
	if err != nil {
		return nil, nil, fmt.Errorf("--dummy-shape: %w", err)
	}
	tok := tokenizer.NewDummy(mc.VocabSize)
	if cfg.Tokenizer != "" {
		if tok, err = tokenizer.Load("", tokenizer.LoadOptions{TokenizerPath: cfg.Tokenizer}); err != nil {
			return nil, nil, fmt.Errorf("--tokenizer: %w", err)
		}
		mc.VocabSize = tok.VocabSize()
	}
	logger.Info("no model given: using the built-in random-weight model; its text is gibberish",
		"dummy_shape", cfg.DummyShape, "params", mc.NumParams(), "vocab", mc.VocabSize, "tokenizer", cmp.Or(cfg.Tokenizer, "byte-level"))
	m, err := model.NewDummyQuantized(mc, cfg.Quantization, cfg.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("--quantization: %w", err)
	}
	return m, tok, nil
}

// modelLabel names the model source in logs.
func modelLabel(cfg engineConfig) string {
	if cfg.Model == "" {
		return "dummy:" + cfg.DummyShape
	}
	return cfg.Model
}
