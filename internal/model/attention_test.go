package model

import (
	"fmt"
	"math"
	"testing"

	"govllm/internal/tensor"
)

// TestWideHeadsPrefill checks a long two-sequence prefill with heads wide
// enough for the tensor Dot/Axpy kernels against the same tokens fed one at
// a time.
func TestWideHeadsPrefill(t *testing.T) {
	cfg := Config{Dim: 128, HiddenDim: 160, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 32,
		VocabSize: 100, MaxSeqLen: 256, RMSNormEps: 1e-5, RopeTheta: 10000}
	m := NewDummy(cfg, tensor.F32, 11)
	for _, threads := range []int{1, 2} {
		t.Run(fmt.Sprint("threads=", threads), func(t *testing.T) {
			pool := tensor.NewPool(threads)
			defer pool.Close()
			a := randTokens(75, cfg.VocabSize, 5)
			b := randTokens(40, cfg.VocabSize, 6)
			kv := NewKVCache(cfg, 16, 16)
			btA, btB := []int32{9, 2, 7, 0, 5}, []int32{1, 12, 3}
			logits := make([]float32, 2*cfg.VocabSize)
			batch := &Batch{Tokens: append(append([]int32{}, a...), b...), Seqs: []Seq{
				{NumTokens: len(a), BlockTable: btA, NeedLogits: true},
				{NumTokens: len(b), BlockTable: btB, NeedLogits: true},
			}}
			ws := m.NewWorkspace(len(batch.Tokens))
			if err := m.Forward(ws, pool, batch, kv, logits); err != nil {
				t.Fatal(err)
			}
			for i, toks := range [][]int32{a, b} {
				one := make([]float32, cfg.VocabSize)
				kv1 := NewKVCache(cfg, 8, 16)
				ws1 := m.NewWorkspace(1)
				for p, tok := range toks {
					step := &Batch{Tokens: []int32{tok}, Seqs: []Seq{{NumTokens: 1, Start: p, BlockTable: []int32{0, 1, 2, 3, 4}, NeedLogits: true}}}
					if err := m.Forward(ws1, pool, step, kv1, one); err != nil {
						t.Fatal(err)
					}
				}
				if d := maxDiff(logits[i*cfg.VocabSize:(i+1)*cfg.VocabSize], one); d > 1e-4 {
					t.Fatalf("seq %d: prefill and token-by-token differ by %g", i, d)
				}
			}
		})
	}
}

// attendGroupRef is attendGroup as it was before grouped query heads went
// through MatMulStrided: one DotStrided call per head and block. The two
// must agree bit for bit (the same kernels, the same summation order).
func attendGroupRef(m *Model, ws *Workspace, b *Batch, kv *KVCache, l, g, i int, out []float32) {
	c := &m.Config
	hd, qd, kvd := c.HeadDim, c.QDim(), c.KVDim()
	grp := c.NumHeads / c.NumKVHeads
	qkvW := qd + 2*kvd
	q := ws.qkv[i*qkvW+g*grp*hd : i*qkvW+(g+1)*grp*hd]
	np := ws.pos[i] + 1
	bt := b.Seqs[ws.seqOf[i]].BlockTable
	bs := kv.BlockSize
	sc := make([]float32, grp*np)
	scale := float32(1 / math.Sqrt(float64(hd)))
	for blk, p := 0, 0; p < np; blk++ {
		cnt := min(bs, np-p)
		k := kv.K[l][int(bt[blk])*bs*kvd+g*hd:]
		for h := 0; h < grp; h++ {
			tensor.DotStrided(sc[h*np+p:h*np+p+cnt], q[h*hd:(h+1)*hd], k, kvd)
		}
		p += cnt
	}
	for j := range sc {
		sc[j] *= scale
	}
	for h := 0; h < grp; h++ {
		tensor.Softmax(sc[h*np : (h+1)*np])
	}
	clear(out)
	for blk, p := 0, 0; p < np; blk++ {
		cnt := min(bs, np-p)
		v := kv.V[l][int(bt[blk])*bs*kvd+g*hd:]
		for h := 0; h < grp; h++ {
			tensor.AxpyStrided(out[h*hd:(h+1)*hd], sc[h*np+p:h*np+p+cnt], v, kvd)
		}
		p += cnt
	}
}

// TestAttentionGroupedBits runs the attention of a mixed batch (a prefill
// chunk and decode rows at several context lengths) for query groups of 1
// to 8 heads per KV head, head sizes 32 to 128, and checks every output
// against attendGroupRef, bit for bit, on 1 and 2 threads.
func TestAttentionGroupedBits(t *testing.T) {
	for _, hd := range []int{32, 48, 64, 128} {
		for _, kvHeads := range []int{8, 4, 2, 1} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("hd=%d/group=%d/threads=%d", hd, 8/kvHeads, threads), func(t *testing.T) {
					cfg := Config{Dim: 8 * hd, HiddenDim: 64, NumLayers: 1, NumHeads: 8, NumKVHeads: kvHeads, HeadDim: hd,
						VocabSize: 10, MaxSeqLen: 512, RMSNormEps: 1e-5, RopeTheta: 10000}
					m := &Model{Config: cfg}
					pool := tensor.NewPool(threads)
					defer pool.Close()
					const bs = 16
					kv := NewKVCache(cfg, 64, bs)
					for l := range kv.K {
						for j := range kv.K[l] {
							kv.K[l][j] = float32((j*7919)%201-100) / 100
							kv.V[l][j] = float32((j*104729)%199-99) / 100
						}
					}
					// Seq 0: a 20-token chunk from position 5; then decode rows.
					starts := []int{5, 0, 15, 16, 47, 200}
					lens := []int{20, 1, 1, 1, 1, 1}
					b := &Batch{}
					next := int32(0)
					for s := range starts {
						nb := (starts[s] + lens[s] + bs - 1) / bs
						bt := make([]int32, nb)
						for j := range bt {
							bt[j] = (next*5 + 3) % 64 // scattered block ids
							next++
						}
						b.Seqs = append(b.Seqs, Seq{NumTokens: lens[s], Start: starts[s], BlockTable: bt})
						for range lens[s] {
							b.Tokens = append(b.Tokens, 0)
						}
					}
					n := len(b.Tokens)
					ws := m.NewWorkspace(n)
					row, maxPos := 0, 0
					for s := range b.Seqs {
						for j := 0; j < b.Seqs[s].NumTokens; j++ {
							ws.pos[row], ws.seqOf[row] = b.Seqs[s].Start+j, int32(s)
							maxPos = max(maxPos, ws.pos[row])
							row++
						}
					}
					for j := range ws.qkv {
						ws.qkv[j] = float32((j*31)%97-48) / 50
					}
					ws.planAttention(m, b, pool)
					m.attention(ws, pool, b, kv, 0, maxPos)
					grp, hd := cfg.NumHeads/cfg.NumKVHeads, cfg.HeadDim
					want := make([]float32, grp*hd)
					for i := 0; i < n; i++ {
						for g := 0; g < cfg.NumKVHeads; g++ {
							attendGroupRef(m, ws, b, kv, 0, g, i, want)
							got := ws.att[i*cfg.QDim()+g*grp*hd : i*cfg.QDim()+(g+1)*grp*hd]
							for j := range want {
								if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
									t.Fatalf("row %d (pos %d) group %d: out[%d] = %g, want %g", i, ws.pos[i], g, j, got[j], want[j])
								}
							}
						}
					}
				})
			}
		}
	}
}
