package kvcache

import "math/bits"

// blockKey is the prefix-cache key of a full block: a 128-bit hash of the
// parent block's key and this block's tokens. The zero key is the parent of
// a request's first block.
type blockKey struct{ hi, lo uint64 }

const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime3 = 0x165667B19E3779F9
	prime4 = 0x85EBCA77C2B2AE63
)

// fmix64 is murmur3's 64-bit finalizer: full avalanche.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// hashBlock chains parent with the block's tokens: two xxhash-style
// accumulator lanes with different multipliers, finalized separately. It is
// fast and non-cryptographic; lookups still verify the stored tokens.
func hashBlock(parent blockKey, tokens []int32) blockKey {
	a := parent.hi ^ prime1
	b := parent.lo ^ prime2
	for _, t := range tokens {
		v := uint64(uint32(t))
		a = bits.RotateLeft64(a+v*prime2, 31) * prime1
		b = bits.RotateLeft64(b^(v*prime4), 27)*prime3 + prime4
	}
	n := uint64(len(tokens))
	return blockKey{
		hi: fmix64(a ^ bits.RotateLeft64(b, 17) ^ n),
		lo: fmix64(b + a*prime3 + n*prime1),
	}
}
