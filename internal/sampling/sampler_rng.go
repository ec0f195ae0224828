package sampling

// RNG is a splitmix64 generator: eight bytes of state, no allocation, and
// the same stream on every platform. The zero value is a valid generator.
//
// Seeded requests draw from SeededRNG(seed, len(output)), a fresh generator
// whose state depends only on the request's seed and the index of the token
// being drawn, so a seeded request samples the same tokens whatever its
// batch mates are and however often it was preempted and recomputed.
type RNG struct{ state uint64 }

// NewRNG returns a generator started from seed.
func NewRNG(seed uint64) RNG { return RNG{state: seed} }

// SeededRNG returns the generator for output token number index of a request
// with the given seed.
func SeededRNG(seed int64, index int) RNG {
	return RNG{state: mix64(mix64(uint64(seed)^0x5851f42d4c957f2d) + uint64(index))}
}

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix64(r.state)
}

// Float64 returns a uniform number in [0, 1) with 53 random bits.
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) * (1.0 / (1 << 53)) }

// mix64 is the splitmix64 output function (a bijection on uint64).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
