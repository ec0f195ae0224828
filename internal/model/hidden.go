package model

import "govllm/internal/tensor"

// checkHidden refuses a Seq.Hidden of the wrong size.
func (m *Model) checkHidden(b *Batch) error {
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		if seq.Hidden != nil && len(seq.Hidden) != seq.NumTokens*m.Config.Dim {
			return batchErr("seq %d: hidden buffer holds %d floats, want %d×%d", s, len(seq.Hidden), seq.NumTokens, m.Config.Dim)
		}
	}
	return nil
}

// hidden writes the final hidden state of every row of each Seq with a
// Hidden buffer: x + post(xo) (the last layer's residual add, after its
// post-FFN norm where the family has one), then the final RMSNorm. It
// computes each row exactly as logits computes the rows it reads, without
// touching ws, so a row gives the same bits alone or in any batch.
func (m *Model) hidden(ws *Workspace, b *Batch) {
	c := &m.Config
	dim := c.Dim
	post := m.Layers[len(m.Layers)-1].PostFFNNorm
	row := 0
	for s := range b.Seqs {
		seq := &b.Seqs[s]
		if seq.Hidden != nil {
			for t := range seq.NumTokens {
				i := row + t
				d := seq.Hidden[t*dim : (t+1)*dim]
				copy(d, ws.xo[i*dim:(i+1)*dim])
				if post != nil {
					tensor.RMSNorm(d, d, post, c.RMSNormEps)
				}
				tensor.Axpy(d, 1, ws.x[i*dim:(i+1)*dim])
				tensor.RMSNorm(d, d, m.Norm, c.RMSNormEps)
			}
		}
		row += seq.NumTokens
	}
}
