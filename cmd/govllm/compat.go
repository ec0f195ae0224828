package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// vLLM's serve flags about GPUs, distribution and Python that have no
// counterpart on this backend. A typical `vllm serve` line carries some of
// them; each is accepted when its value changes nothing here (and named
// in one start-up warning), and refused when its value asks for something
// this backend cannot do. None is ignored silently.

// compatFlag is one such flag: check returns nil when v is a no-op here,
// else why it is refused.
type compatFlag struct {
	name, usage string
	isBool      bool
	check       func(v string) error
}

var compatFlags = []compatFlag{
	{"tensor-parallel-size", "accepted for vLLM command lines: only 1 (-tp 1); tensor parallelism is not available on this backend", false,
		onlyOne("tensor parallelism")},
	{"pipeline-parallel-size", "accepted for vLLM command lines: only 1 (-pp 1)", false, onlyOne("pipeline parallelism")},
	{"data-parallel-size", "accepted for vLLM command lines: only 1 (-dp 1); run replicas behind a balancer instead", false, onlyOne("data parallelism")},
	{"gpu-memory-utilization", "accepted for vLLM command lines, no effect: the KV cache is sized by --kv-cache-memory", false, fraction},
	{"dtype", "accepted for vLLM command lines, no effect: auto, half, float16, bfloat16, float or float32 (weights keep their file's types; activations are float32)", false,
		oneOf("auto", "half", "float16", "bfloat16", "float", "float32")},
	{"trust-remote-code", "accepted for vLLM command lines, no effect: no model code is ever run, the architectures are built in", true, isBool},
	{"enforce-eager", "accepted for vLLM command lines, no effect: there are no CUDA graphs", true, isBool},
	{"disable-custom-all-reduce", "accepted for vLLM command lines, no effect: there is one process", true, isBool},
	{"swap-space", "accepted for vLLM command lines, no effect: a preempted request is recomputed, not swapped (GiB)", false, nonNegative},
	{"cpu-offload-gb", "accepted for vLLM command lines: only 0 (the weights are in CPU memory already)", false, oneOf("0")},
}

// addCompatFlags registers compatFlags on fs; each one given is appended
// to *warn ("--dtype auto") once its value passed its check.
func addCompatFlags(fs *flag.FlagSet, warn *[]string) {
	for _, f := range compatFlags {
		set := func(v string) error {
			if err := f.check(v); err != nil {
				return err
			}
			if f.isBool && v == "true" {
				v = ""
			}
			*warn = append(*warn, strings.TrimSpace("--"+f.name+" "+v))
			return nil
		}
		if f.isBool {
			fs.BoolFunc(f.name, f.usage, set)
		} else {
			fs.Func(f.name, f.usage, set)
		}
	}
}

func onlyOne(what string) func(string) error {
	return func(v string) error {
		if n, err := strconv.Atoi(v); err != nil || n != 1 {
			return fmt.Errorf("%s is not available on this backend (one CPU process): only 1 is accepted, got %q", what, v)
		}
		return nil
	}
}

func oneOf(values ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(values, v) {
			return fmt.Errorf("%q cannot be honoured on this backend (accepted: %s)", v, strings.Join(values, ", "))
		}
		return nil
	}
}

func fraction(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 || f > 1 {
		return fmt.Errorf("must be a fraction in (0, 1], got %q", v)
	}
	return nil
}

func nonNegative(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
		return fmt.Errorf("must be a number ≥ 0, got %q", v)
	}
	return nil
}

func isBool(v string) error {
	_, err := strconv.ParseBool(v)
	return err
}
