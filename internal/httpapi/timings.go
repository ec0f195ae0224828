package httpapi

import (
	"slices"

	"govllm/internal/openai"
	"govllm/internal/output"
)

// timings is a non-streaming response's "timings" with ResponseTimings:
// each choice's, from the statistics its sequence finished with (the
// values the vllm:* histograms observed), in choice order; nil otherwise.
func (s *Server) timings(g *genRequest, outs []*output.RequestOutput) any {
	var ts []openai.Timings
	for i, o := range outs {
		for j := range o.Outputs {
			ts = s.addTimings(ts, g, i, &o.Outputs[j])
		}
	}
	return timingsOf(ts)
}

// addTimings appends choice c of prompt pi's timings to ts once it
// finished, with ResponseTimings.
func (s *Server) addTimings(ts []openai.Timings, g *genRequest, pi int, c *output.CompletionOutput) []openai.Timings {
	if !s.cfg.ResponseTimings || c.Timings == nil {
		return ts
	}
	return append(ts, openai.NewTimings(g.choiceIndex(pi, c.Index), &c.Timings.FinishedRequestStats, c.Timings.TimeToFirstToken))
}

// timingsOf orders ts by choice and renders them (nil when empty).
func timingsOf(ts []openai.Timings) any {
	slices.SortFunc(ts, func(a, b openai.Timings) int { return a.Index - b.Index })
	return openai.TimingsOf(ts)
}
