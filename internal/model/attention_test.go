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

// TestAttentionGroupedBits runs the attention of a mixed batch and checks
// every output against attendGroupRef, bit for bit: query groups of 1 to
// 16 heads per KV head (the tile path for 1, the scores kernel up to 8,
// its fallback past), head sizes 32 to 128 (with and without a k%16
// tail), KV-cache block sizes 8, 16 and 32, on 1 and 2 threads. The batch
// holds chunked prefills starting inside and at the edge of a block (Start
// > 0, as after a prefix-cache hit) whose tiles have 1 to 8 rows, two
// sequences sharing their first blocks (a cached prefix), a block table
// out of order, and decode rows at several context lengths: every row's
// result must be the one it gets alone, whatever shares its batch.
func TestAttentionGroupedBits(t *testing.T) {
	batch := []attnSeq{
		{5, 20, 0},  // tiles of 8, 8, 4 rows from inside a block
		{0, 13, 0},  // a first prefill: 8 + 5
		{37, 7, 1},  // a tile of 7, its first block the previous seq's
		{64, 11, 2}, // from a block edge at every block size: 8 + 3
		{30, 2, 0},  // a tile of 2
		{121, 6, 0}, // a tile of 6 over many blocks
		// Decode rows.
		{0, 1, 0}, {15, 1, 0}, {16, 1, 0}, {47, 1, 0}, {200, 1, 0},
	}
	for _, hd := range []int{32, 40, 48, 64, 80, 128} {
		for _, h := range []struct{ heads, kvHeads int }{{8, 8}, {6, 2}, {8, 4}, {8, 2}, {8, 1}, {16, 1}} {
			for _, bs := range []int{8, 16, 32} {
				for _, threads := range []int{1, 2} {
					name := fmt.Sprintf("hd=%d/group=%d/bs=%d/threads=%d", hd, h.heads/h.kvHeads, bs, threads)
					t.Run(name, func(t *testing.T) {
						testAttentionBits(t, tensor.KVF32, hd, h.heads, h.kvHeads, bs, threads, batch)
					})
				}
			}
		}
	}
}

// TestAttentionKVFormats is TestAttentionGroupedBits over F16 and Q8_0
// caches: attention reading the coded rows must give the bits of
// attention over a float32 cache of the same rows rounded through the
// format (tensor.KVCodec.Round), a reference that does not go through
// the decoding path (kvView). Head sizes 16 (F16 only: the small-head
// loops, whose reference is the same loops over the float32 cache) to
// 128, single and grouped query heads.
func TestAttentionKVFormats(t *testing.T) {
	batch := []attnSeq{{5, 20, 0}, {0, 13, 0}, {37, 7, 1}, {64, 11, 2}, {0, 1, 0}, {16, 1, 0}, {47, 1, 0}, {200, 1, 0}}
	for _, codec := range []*tensor.KVCodec{tensor.KVF16, tensor.KVQ8_0} {
		for _, hd := range []int{16, 32, 64, 128} {
			if hd%codec.Block != 0 {
				continue
			}
			for _, h := range []struct{ heads, kvHeads int }{{4, 4}, {8, 2}, {8, 1}} {
				for _, bs := range []int{8, 16} {
					for _, threads := range []int{1, 2} {
						name := fmt.Sprintf("%s/hd=%d/group=%d/bs=%d/threads=%d", codec.Name, hd, h.heads/h.kvHeads, bs, threads)
						t.Run(name, func(t *testing.T) {
							testAttentionBits(t, codec, hd, h.heads, h.kvHeads, bs, threads, batch)
						})
					}
				}
			}
		}
	}
}

// attnSeq is one sequence of testAttentionBits's batch: n tokens from
// position start, its first shared blocks the previous sequence's.
type attnSeq struct{ start, n, shared int }

// testAttentionBits runs one layer's attention over batch, the cache in
// format codec, and compares every row and KV head with attendGroupRef
// over a float32 cache holding the values rounded through codec (Round),
// bit for bit.
func testAttentionBits(t *testing.T, codec *tensor.KVCodec, hd, heads, kvHeads, bs, threads int, batch []attnSeq) {
	cfg := Config{Dim: heads * hd, HiddenDim: 64, NumLayers: 1, NumHeads: heads, NumKVHeads: kvHeads, HeadDim: hd,
		VocabSize: 10, MaxSeqLen: 512, RMSNormEps: 1e-5, RopeTheta: 10000}
	m := &Model{Config: cfg}
	pool := tensor.NewPool(threads)
	defer pool.Close()
	numBlocks := 0
	for _, s := range batch {
		numBlocks += (s.start + s.n + bs - 1) / bs
	}
	kv := NewKVCache(cfg, numBlocks, bs)
	coded := NewKVCacheOf(codec, cfg, numBlocks, bs)
	for l := range kv.K {
		for j := range kv.K[l] {
			kv.K[l][j] = float32((j*7919)%201-100) / 100
			kv.V[l][j] = float32((j*104729)%199-99) / 100
		}
		for s := 0; s < numBlocks*bs; s++ {
			k, v := kv.K[l][s*cfg.KVDim():(s+1)*cfg.KVDim()], kv.V[l][s*cfg.KVDim():(s+1)*cfg.KVDim()]
			coded.store(l, s, k, v)
			codec.Round(k)
			codec.Round(v)
		}
	}
	b := &Batch{}
	next := 0
	for si, s := range batch {
		bt := make([]int32, (s.start+s.n+bs-1)/bs)
		for j := range bt {
			if j < s.shared && si > 0 {
				bt[j] = b.Seqs[si-1].BlockTable[j]
				continue
			}
			bt[j] = int32((next*5 + 3) % numBlocks) // scattered, out of order
			next++
		}
		b.Seqs = append(b.Seqs, Seq{NumTokens: s.n, Start: s.start, BlockTable: bt})
		for range s.n {
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
	var small []float32 // heads under 32: attention over the float32 cache
	if hd < 32 {
		m.attention(ws, pool, b, kv, 0, maxPos)
		small = append(small, ws.att...)
	}
	m.attention(ws, pool, b, coded, 0, maxPos)
	grp := heads / kvHeads
	want := make([]float32, grp*hd)
	for i := 0; i < n; i++ {
		for g := 0; g < kvHeads; g++ {
			if small != nil {
				copy(want, small[i*cfg.QDim()+g*grp*hd:])
			} else {
				attendGroupRef(m, ws, b, kv, 0, g, i, want)
			}
			got := ws.att[i*cfg.QDim()+g*grp*hd : i*cfg.QDim()+(g+1)*grp*hd]
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("row %d (seq %d, pos %d) group %d: out[%d] = %g, want %g", i, ws.seqOf[i], ws.pos[i], g, j, got[j], want[j])
				}
			}
		}
	}
}
