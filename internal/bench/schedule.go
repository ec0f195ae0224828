package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// runAll sends every prompt on the arrival schedule under the concurrency
// cap and returns the results in prompt order and the run's duration. A
// request waiting for the cap counts its wait as client queue time (from
// its arrival to its sending), as vLLM's does.
func runAll(ctx context.Context, c *client, cfg *Config, prompts []Prompt) ([]requestResult, time.Duration) {
	results := make([]requestResult, len(prompts))
	var sem chan struct{}
	if cfg.MaxConcurrency > 0 {
		sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	delays := arrivalDelays(cfg, len(prompts))
	prog := newProgress(cfg.Progress, cfg.ProgressIsTTY, len(prompts))
	var wg sync.WaitGroup
	start := time.Now()
	for i := range prompts {
		if d := time.Until(start.Add(delays[i])); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		arrival := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sem != nil {
				select {
				case sem <- struct{}{}:
					defer func() { <-sem }()
				case <-ctx.Done():
					results[i] = requestResult{Start: arrival, Err: ctx.Err().Error()}
					return
				}
			}
			p := prompts[i]
			if cfg.RequestIDPrefix != "" {
				p.RequestID = cfg.RequestIDPrefix + strconv.Itoa(i)
			}
			results[i] = c.send(ctx, cfg, &p)
			results[i].Queue = results[i].Start.Sub(arrival)
			prog.done(results[i].Success)
		}()
	}
	wg.Wait()
	prog.finish()
	return results, time.Since(start)
}

// arrivalDelays is when each of n requests arrives, from the run's start
// (vLLM's get_request): gaps drawn from gamma(shape=burstiness,
// scale=1/(rate·burstiness)) at the constant --request-rate, rescaled so
// the last arrival is at n/rate exactly; or, with a ramp-up, at the rate
// of request i, which goes from the start to the end RPS linearly or
// exponentially over the requests. An infinite rate sends at once.
func arrivalDelays(cfg *Config, n int) []time.Duration {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 42))
	secs := make([]float64, n)
	total := 0.0
	for i := range secs {
		rate := requestRate(cfg, i, n)
		switch {
		case math.IsInf(rate, 1):
		case math.IsInf(cfg.Burstiness, 1):
			total += 1 / rate
		default:
			total += gamma(rng, cfg.Burstiness) / (rate * cfg.Burstiness)
		}
		secs[i] = total
	}
	if cfg.RampUpStrategy == "" && n > 0 && secs[n-1] != 0 {
		scale := float64(n) / cfg.RequestRate / secs[n-1]
		for i := range secs {
			secs[i] *= scale
		}
	}
	out := make([]time.Duration, n)
	for i, s := range secs {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// requestRate is the rate at request i of n (vLLM's
// _get_current_request_rate).
func requestRate(cfg *Config, i, n int) float64 {
	progress := float64(i) / float64(max(n-1, 1))
	switch cfg.RampUpStrategy {
	case "linear":
		return cfg.RampUpStartRPS + (cfg.RampUpEndRPS-cfg.RampUpStartRPS)*progress
	case "exponential":
		return cfg.RampUpStartRPS * math.Pow(cfg.RampUpEndRPS/cfg.RampUpStartRPS, progress)
	}
	return cfg.RequestRate
}

// gammaInterval draws the gap to the next arrival: gamma(shape=burstiness,
// scale=1/(rate·burstiness)), so the mean rate is `rate` and burstiness 1
// is a Poisson process (vLLM's arrival model).
func gammaInterval(rng *rand.Rand, rate, burstiness float64) time.Duration {
	theta := 1 / (rate * burstiness)
	return time.Duration(gamma(rng, burstiness) * theta * float64(time.Second))
}

// gamma samples Gamma(shape, 1) by Marsaglia and Tsang.
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
