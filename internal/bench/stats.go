package bench

import (
	"math"
	"slices"
	"strconv"
)

// Summary is the mean, median, standard deviation and requested
// percentiles of one latency series, in milliseconds.
type Summary struct {
	Mean, Median, Std float64
	Percentiles       []Percentile
}

// Percentile is one requested percentile of a series.
type Percentile struct {
	P     float64 // 0..100
	Value float64
}

// percentile uses linear interpolation between closest ranks (numpy's
// default, which vLLM uses). sorted must be ascending and non-empty.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// summarize computes the Summary of xs (any order); an empty series gives zeros.
func summarize(xs []float64, ps []float64) Summary {
	s := Summary{}
	if len(xs) == 0 {
		for _, p := range ps {
			s.Percentiles = append(s.Percentiles, Percentile{P: p})
		}
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var sum float64
	for _, x := range sorted {
		sum += x
	}
	s.Mean = sum / float64(len(sorted))
	var ss float64
	for _, x := range sorted {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.Std = math.Sqrt(ss / float64(len(sorted))) // population std, as numpy.std
	s.Median = percentile(sorted, 50)
	for _, p := range ps {
		s.Percentiles = append(s.Percentiles, Percentile{P: p, Value: percentile(sorted, p)})
	}
	return s
}

// pLabel formats a percentile the way vLLM names its JSON fields: 99 → "99", 99.9 → "99.9".
func pLabel(p float64) string {
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p))
	}
	return strconv.FormatFloat(p, 'f', -1, 64)
}
