package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// stringList is a repeatable, comma-splitting flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// parseBytes reads "123", "512MiB", "2GiB", "1.5GB", "64k" (binary for
// KiB/MiB/GiB/TiB and bare K/M/G/T, decimal for KB/MB/GB/TB).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("invalid size unit in %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	v := f * mult
	if v < 1 || v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q out of range", s)
	}
	return int64(v), nil
}

// formatBytes spells n as parseBytes reads it back: a whole number of
// GiB, MiB or KiB when it is one, else bytes.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseFlags parses args into fs. The flag package has already printed a
// bad flag and the usage, so such an error is returned as errUsage (exit
// 2, nothing printed again); a help request stays flag.ErrHelp (exit 0).
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

// printDefaults is flag.PrintDefaults with vLLM's spelling of flags
// ("--max-num-seqs"; the flag package accepts one or two dashes).
func printDefaults(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) { printFlag(fs.Output(), f) })
}

// flagGroup is a titled group of flags in --help.
type flagGroup struct {
	title string
	flags []string
}

// printGroups prints fs's flags under the groups' titles, as vLLM's
// --help does; flags of no group come last, under "Other".
func printGroups(fs *flag.FlagSet, groups []flagGroup) {
	w := fs.Output()
	seen := map[string]bool{}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil && !seen[name] {
				seen[name] = true
				printFlag(w, f)
			}
		}
	}
	var other []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] {
			other = append(other, f)
		}
	})
	if len(other) > 0 {
		fmt.Fprintf(w, "\nOther:\n")
		for _, f := range other {
			printFlag(w, f)
		}
	}
}

// printFlag prints one flag as printDefaults does.
func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if name != "" {
		line += " " + name
	}
	usage = strings.ReplaceAll(usage, "\n", "\n    \t")
	line += "\n    \t" + usage
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
	default:
		if name == "string" {
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		} else {
			line += fmt.Sprintf(" (default %v)", f.DefValue)
		}
	}
	fmt.Fprintln(w, line)
}

// parseSeconds reads a whole number of seconds ("30", vLLM's spelling) or
// a Go duration ("90s", "2m").
func parseSeconds(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if n, ierr := strconv.Atoi(v); ierr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (seconds, or a duration such as 90s)", v)
	}
	return d, nil
}

// vllmShortFlags are vLLM's multi-letter single-dash spellings (argparse
// allows them; pflag's shorthands are one letter, so they are rewritten
// before parsing).
var vllmShortFlags = map[string]string{
	"tp": "tensor-parallel-size",
	"pp": "pipeline-parallel-size",
	"dp": "data-parallel-size",
	"q":  "quantization",
}

// parseGNU parses args into fs's flags as vLLM's argparse does, with pflag:
// --x=y and --x y, underscore spellings (--max_model_len), vLLM's -tp style
// short flags, Go's single-dash long flags (-model), and every value after
// a flag of multi up to the next flag (--served-model-name a b). Flags are
// defined on the standard FlagSet (its usage is the help). It returns the
// positional arguments; a bad flag is printed (with a pointer to --help) and returned
// as errUsage, a help request as flag.ErrHelp.
func parseGNU(fs *flag.FlagSet, args []string, multi ...string) ([]string, error) {
	ps := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	ps.SetOutput(io.Discard)
	ps.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	ps.AddGoFlagSet(fs)
	err := ps.Parse(gnuArgs(fs, args, multi))
	switch {
	case err == nil:
		return ps.Args(), nil
	case errors.Is(err, pflag.ErrHelp):
		fs.Usage()
		return nil, flag.ErrHelp
	}
	fmt.Fprintf(fs.Output(), "govllm %s: %v\nRun 'govllm %s --help' for the flags.\n", fs.Name(), err, fs.Name())
	return nil, fmt.Errorf("%w: %v", errUsage, err)
}

// gnuArgs rewrites every flag of args that fs defines as "--name" or
// "--name=value" (names with dashes; vLLM's short flags spelled out), and a
// flag of multi followed by several values as one "--name=value" each.
// Other arguments, and everything after "--", are kept for pflag.
func gnuArgs(fs *flag.FlagSet, args, multi []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		if long, ok := vllmShortFlags[name]; ok && !strings.HasPrefix(a, "--") {
			name = long
		}
		switch {
		case !strings.HasPrefix(a, "-") || fs.Lookup(name) == nil:
			out = append(out, a) // a value, a positional argument, or a flag pflag refuses
		case hasVal:
			out = append(out, "--"+name+"="+val)
		case slices.Contains(multi, name) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				out = append(out, "--"+name+"="+args[i])
			}
		default:
			out = append(out, "--"+name)
		}
	}
	return out
}

// humanInt is a token-count flag read as vLLM's argparse reads one: an
// integer, or a number with a suffix — k, m, g, t decimal (25.6k = 25600),
// K, M, G, T binary (4K = 4096; whole numbers only).
type humanInt int

func (h *humanInt) String() string { return strconv.Itoa(int(*h)) }

func (h *humanInt) Set(s string) error {
	n, err := parseHumanInt(s)
	if err == nil {
		*h = humanInt(n)
	}
	return err
}

// parseHumanInt reads a humanInt.
func parseHumanInt(s string) (int, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.Atoi(t); err == nil {
		return n, nil
	}
	if t == "" {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	num, suffix := t[:len(t)-1], t[len(t)-1]
	exp := strings.IndexByte("kmgt", suffix|0x20) + 1 // 1 for k/K … 4 for t/T; 0 when none
	if exp == 0 {
		return 0, fmt.Errorf("invalid number %q (an integer, or one with a k, m, g, t (decimal) or K, M, G, T (binary) suffix)", s)
	}
	if suffix >= 'a' {
		f, err := strconv.ParseFloat(num, 64)
		v := f * math.Pow(1000, float64(exp))
		if err != nil || f < 0 || v > math.MaxInt32 {
			return 0, fmt.Errorf("invalid number %q", s)
		}
		return int(v), nil
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > math.MaxInt32>>(10*exp) {
		return 0, fmt.Errorf("invalid number %q (decimals are not allowed with binary suffixes: did you mean %s%c?)", s, num, suffix|0x20)
	}
	return n << (10 * exp), nil
}

// setBool is the Set of a boolean flag that writes *dst, negated when
// negate (--no-enable-prefix-caching): "--x" is true, "--x=false" false.
func setBool(dst *bool, negate bool) func(string) error {
	return func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		*dst = b != negate
		return nil
	}
}
