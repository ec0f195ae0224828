package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// expandConfig replaces vLLM's --config FILE in args by the flags of FILE,
// a YAML mapping of flag names (dashes or underscores) to values: a scalar
// is the flag's value, a list one value each (--served-model-name), true a
// bare boolean flag and false its --no- form when there is one. A flag
// given on the command line overrides the file's (the file's is dropped).
// The file's flags go first, so the positional MODEL keeps its place.
// Names in given count as given on the command line (the positional MODEL
// is "model").
func expandConfig(fs *flag.FlagSet, args []string, given ...string) ([]string, error) {
	i := slices.IndexFunc(args, func(a string) bool { return a == "--config" || strings.HasPrefix(a, "--config=") })
	if end := slices.Index(args, "--"); i < 0 || end >= 0 && i > end {
		return args, nil
	}
	path, rest := strings.TrimPrefix(args[i], "--config="), slices.Delete(slices.Clone(args), i, i+1)
	if args[i] == "--config" {
		if i+1 >= len(args) {
			return nil, fmt.Errorf("--config needs a file")
		}
		path, rest = args[i+1], slices.Delete(slices.Clone(args), i, i+2)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	onCLI := map[string]bool{}
	for _, name := range given {
		onCLI[name] = true
	}
	for _, a := range gnuArgs(fs, rest, nil) {
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "="); strings.HasPrefix(a, "--") {
			onCLI[name] = true
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		name := strings.ReplaceAll(k, "_", "-")
		if onCLI[name] || onCLI["no-"+name] {
			continue
		}
		flags, err := configFlags(fs, name, m[k])
		if err != nil {
			return nil, fmt.Errorf("--config %s: %s: %w", path, k, err)
		}
		out = append(out, flags...)
	}
	return append(out, rest...), nil
}

// configFlags spells one key of a --config file as flags.
func configFlags(fs *flag.FlagSet, name string, v any) ([]string, error) {
	switch v := v.(type) {
	case bool:
		if !v && fs.Lookup("no-"+name) != nil {
			return []string{"--no-" + name}, nil
		}
		if v {
			return []string{"--" + name}, nil
		}
		return []string{"--" + name + "=false"}, nil
	case string:
		return []string{"--" + name + "=" + v}, nil
	case float64:
		return []string{"--" + name + "=" + strconv.FormatFloat(v, 'f', -1, 64)}, nil
	case []any:
		var out []string
		for _, e := range v {
			f, err := configFlags(fs, name, e)
			if err != nil {
				return nil, err
			}
			out = append(out, f...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value %v (a string, number, boolean or list of them)", v)
}
