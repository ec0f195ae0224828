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
	if !s.cfg.ResponseTimings {
		return nil
	}
	var ts []openai.Timings
	for i, o := range outs {
		for _, c := range o.Outputs {
			if c.Timings != nil {
				ts = append(ts, openai.NewTimings(g.choiceIndex(i, c.Index), c.Timings))
			}
		}
	}
	slices.SortFunc(ts, func(a, b openai.Timings) int { return a.Index - b.Index })
	return openai.TimingsOf(ts)
}
