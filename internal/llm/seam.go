package llm

import (
	"time"

	"govllm/internal/output"
	"govllm/internal/sampling"
	"govllm/internal/sched"
	"govllm/internal/stats"
	"govllm/internal/tokenizer"
)

// StatLogger receives every engine step's statistics (vLLM
// StatLoggerBase.record). Neither argument is ever nil: s is the scheduler
// snapshot the core takes after every step, it the step's iteration
// statistics — empty (its zero value but the timestamp) for a step without
// request outputs, such as the snapshot after the last request left.
// Record is called from one goroutine at a time, in step order.
type StatLogger interface {
	Record(s *stats.SchedulerStats, it *stats.IterationStats)
}

// pipeline is the one seam both front ends share: core outputs in, request
// outputs and statistics out. It belongs to one goroutine.
type pipeline struct {
	proc    *output.Processor
	loggers []StatLogger
	always  bool // collect statistics without loggers too (Config.RequestStats)
}

func newPipeline(tok *tokenizer.Tokenizer, loggers []StatLogger) pipeline {
	newDec := func(prompt []int32, p *sampling.Params) output.Decoder {
		return tok.NewDecoderSpaced(prompt, !p.KeepSpecialTokens, !p.NoSpacesAroundSpecial)
	}
	return pipeline{proc: output.NewProcessor(newDec), loggers: loggers}
}

// handle turns one step's core outputs into request outputs and hands the
// step's statistics to every logger. It is called for every step,
// including steps with a scheduler snapshot and no outputs. stopAborts are
// sequences a stop string finished that the caller must abort in the core.
func (p *pipeline) handle(co *sched.CoreOutputs) (outs []*output.RequestOutput, stopAborts []sched.RequestID) {
	var it *stats.IterationStats // collected only for loggers, or for the outputs' Timings
	if len(p.loggers) > 0 || p.always {
		it = stats.NewIterationStats(time.Now())
		// Usually one inter-token sample per output: size it once.
		it.InterTokenLatenciesIter = make([]time.Duration, 0, len(co.Outputs))
	}
	outs, stopAborts = p.proc.Process(co, it)
	for _, l := range p.loggers {
		l.Record(co.SchedulerStats, it)
	}
	return outs, stopAborts
}
