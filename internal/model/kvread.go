package model

import (
	"fmt"

	"govllm/internal/tensor"
)

// KVCacheDTypes are the --kv-cache-dtype values govllm honours, in vLLM's
// spelling: auto (float32), fp16 and float16 (IEEE half precision), q8_0
// (GGML's Q8_0 blocks).
var KVCacheDTypes = []string{"auto", "fp16", "float16", "q8_0"}

// KVCacheDType is the KV cache format named name (one of KVCacheDTypes),
// nil when govllm has none of that name.
func KVCacheDType(name string) *tensor.KVCodec {
	switch name {
	case "auto":
		return tensor.KVF32
	case "fp16", "float16":
		return tensor.KVF16
	case "q8_0":
		return tensor.KVQ8_0
	}
	return nil
}

// CheckKVCacheDType says whether the model's K and V rows can be kept in
// codec: Q8_0 blocks of 32 must tile every head.
func (c *Config) CheckKVCacheDType(codec *tensor.KVCodec) error {
	if codec != nil && c.HeadDim%codec.Block != 0 {
		return fmt.Errorf("--kv-cache-dtype %s needs a head dim that is a multiple of %d; this model's head dim is %d", codec.Name, codec.Block, c.HeadDim)
	}
	return nil
}

// headBytes is the bytes of one head's row in the coded cache.
func (kv *KVCache) headBytes(hd int) int { return kv.Codec.RowBytes(hd) }

// store writes one token's K and V rows (KVDim values each) to slot s of
// layer l.
func (kv *KVCache) store(l, s int, k, v []float32) {
	n := len(k)
	if kv.K != nil {
		copy(kv.K[l][s*n:(s+1)*n], k)
		copy(kv.V[l][s*n:(s+1)*n], v)
		return
	}
	rb := kv.Codec.RowBytes(n)
	kv.Codec.Encode(kv.KQ[l][s*rb:(s+1)*rb], k)
	kv.Codec.Encode(kv.VQ[l][s*rb:(s+1)*rb], v)
}

// kvView is what attention reads for one KV head: K and V rows of
// positions 0..np-1, block blk's slot j at (bt[blk]·BlockSize + j)·stride
// + off in k and v.
type kvView struct {
	k, v        []float32
	bt          []int32
	stride, off int
}

// kvView returns layer l's K and V of KV head g over the first np
// positions of block table bt: the float32 cache itself, or those rows of
// a coded cache decoded into chunk ch's scratch (block blk at
// blk·BlockSize·HeadDim, a block table 0, 1, 2, …). Decoding depends only
// on the cache's bytes, so the kernels that follow see exactly the values
// a float32 cache of the decoded rows would hold, in the same layout
// order.
func (ws *Workspace) kvView(kv *KVCache, l, g int, bt []int32, np, ch int) kvView {
	c := &ws.cfg
	hd, kvd := c.HeadDim, c.KVDim()
	if kv.K != nil {
		return kvView{k: kv.K[l], v: kv.V[l], bt: bt, stride: kvd, off: g * hd}
	}
	bs := kv.BlockSize
	hb := kv.headBytes(hd)
	sb := c.NumKVHeads * hb // slot bytes
	kq, vq := kv.KQ[l], kv.VQ[l]
	sk, sv := ws.kvK[ch], ws.kvV[ch]
	for blk, p := 0, 0; p < np; blk++ {
		cnt := min(bs, np-p)
		src := int(bt[blk])*bs*sb + g*hb
		dst := blk * bs * hd
		kv.Codec.DecodeRows(sk[dst:dst+cnt*hd], kq[src:], hd, cnt, sb)
		kv.Codec.DecodeRows(sv[dst:dst+cnt*hd], vq[src:], hd, cnt, sb)
		p += cnt
	}
	return kvView{k: sk, v: sv, bt: ws.kvIdent[:(np+bs-1)/bs], stride: hd, off: 0}
}

// ensureKVScratch sizes the per-chunk decode buffers for positions up to
// maxPos of a coded cache (nothing for a float32 one).
func (ws *Workspace) ensureKVScratch(kv *KVCache, chunks, maxPos int) {
	if kv.K != nil {
		return
	}
	nb := maxPos/kv.BlockSize + 1
	n := nb * kv.BlockSize * ws.cfg.HeadDim
	for len(ws.kvK) < chunks {
		ws.kvK = append(ws.kvK, nil)
		ws.kvV = append(ws.kvV, nil)
	}
	for ch := range chunks {
		if len(ws.kvK[ch]) < n {
			ws.kvK[ch] = make([]float32, max(n, 2*len(ws.kvK[ch])))
			ws.kvV[ch] = make([]float32, len(ws.kvK[ch]))
		}
	}
	for len(ws.kvIdent) < nb {
		ws.kvIdent = append(ws.kvIdent, int32(len(ws.kvIdent)))
	}
}

// checkKV validates kv's sizes and format against the model.
func (m *Model) checkKV(kv *KVCache) error {
	c := &m.Config
	if kv == nil || kv.BlockSize <= 0 || kv.NumBlocks <= 0 {
		return batchErr("KV cache missing or empty")
	}
	if err := c.CheckKVCacheDType(kv.Codec); err != nil {
		return batchErr("%v", err)
	}
	slots := kv.NumBlocks * kv.BlockSize
	if kv.Codec == nil || kv.Codec == tensor.KVF32 {
		return checkKVLayers(c.NumLayers, slots*c.KVDim(), kv.K, kv.V)
	}
	return checkKVLayers(c.NumLayers, slots*c.NumKVHeads*kv.headBytes(c.HeadDim), kv.KQ, kv.VQ)
}

// checkKVLayers checks that k and v have layers layers of want elements.
func checkKVLayers[E float32 | byte](layers, want int, k, v [][]E) error {
	if len(k) != layers || len(v) != layers {
		return batchErr("KV cache does not match the model (%d layers)", layers)
	}
	for l := range k {
		if len(k[l]) != want || len(v[l]) != want {
			return batchErr("KV cache layer %d holds %d/%d values, want %d", l, len(k[l]), len(v[l]), want)
		}
	}
	return nil
}
