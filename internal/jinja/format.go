package jinja

import (
	"fmt"
	"strings"
)

// Python printf-style string formatting: the % operator on a string and
// the format filter ("%s, %s"|format(a, b), "%(x)s"|format(x=1)).
// Supported: %s %r %d %i %f %F %e %E %g %G %x %X %o %c %% with the flags
// "-+ 0#", a width and a precision, and %(name)s keys into a dict.

// percentFormat is format % args. A list (Jinja's tuple) supplies the
// positional values; a dict supplies %(name)s values; anything else is the
// single value.
func percentFormat(format string, args Value) (Value, error) {
	var positional []Value
	var named *Dict
	switch {
	case args.IsList():
		positional = args.AsList().Items
	case args.IsDict():
		named = args.AsDict()
		positional = []Value{args}
	default:
		positional = []Value{args}
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		spec, key, end, err := scanSpec(format, i+1)
		if err != nil {
			return Undefined(), err
		}
		i = end
		if spec[len(spec)-1] == '%' {
			b.WriteByte('%')
			continue
		}
		var v Value
		switch {
		case key != "" && named != nil:
			v, _ = named.Get(key)
		case key != "":
			return Undefined(), fmt.Errorf("format requires a mapping for %%(%s)", key)
		case next < len(positional):
			v = positional[next]
			next++
		default:
			return Undefined(), fmt.Errorf("not enough arguments for format string")
		}
		b.WriteString(formatOne(spec, v))
	}
	if named == nil && next < len(positional) {
		return Undefined(), fmt.Errorf("not all arguments converted during string formatting")
	}
	return NewString(b.String()), nil
}

// scanSpec reads one conversion starting after '%': an optional (key),
// flags, width, precision and the conversion letter. It returns the spec
// without the key (e.g. "-5.2f"), the key and the index of the letter.
func scanSpec(format string, i int) (spec, key string, end int, err error) {
	if i < len(format) && format[i] == '(' {
		j := strings.IndexByte(format[i:], ')')
		if j < 0 {
			return "", "", 0, fmt.Errorf("incomplete format key")
		}
		key = format[i+1 : i+j]
		i += j + 1
	}
	start := i
	for i < len(format) && strings.IndexByte("-+ 0#.0123456789", format[i]) >= 0 {
		i++
	}
	if i >= len(format) {
		return "", "", 0, fmt.Errorf("incomplete format")
	}
	if strings.IndexByte("srdifFeEgGxXoc%", format[i]) < 0 {
		return "", "", 0, fmt.Errorf("unsupported format character %q", format[i])
	}
	return format[start : i+1], key, i, nil
}

// formatOne renders v with one conversion spec.
func formatOne(spec string, v Value) string {
	verb := spec[len(spec)-1]
	flags := spec[:len(spec)-1]
	switch verb {
	case 's':
		return fmt.Sprintf("%"+flags+"s", pyStr(v))
	case 'r':
		return fmt.Sprintf("%"+flags+"s", v.String())
	case 'd', 'i':
		return fmt.Sprintf("%"+flags+"d", toInt64(v))
	case 'x', 'X', 'o':
		return fmt.Sprintf("%"+flags+string(verb), toInt64(v))
	case 'c':
		if v.IsString() {
			return v.AsString()
		}
		return string(rune(toInt64(v)))
	case 'f', 'F', 'e', 'E', 'g', 'G':
		if !strings.Contains(flags, ".") && verb != 'g' && verb != 'G' {
			flags += ".6"
		}
		return fmt.Sprintf("%"+flags+string(verb), toFloat64(v))
	}
	return ""
}

// pyStr is Python's str(v) for the values templates hold.
func pyStr(v Value) string {
	switch v.kind {
	case KindNone:
		return "None"
	case KindString:
		return v.AsString()
	}
	return printValue(v)
}

// filterFormat is Jinja's format filter: value % args, or value % kwargs.
func filterFormat(args []Value, kwargs map[string]Value) (Value, error) {
	if len(args) == 0 || !args[0].IsString() {
		return Undefined(), fmt.Errorf("format: the value must be a string")
	}
	if len(kwargs) > 0 {
		d := NewDict()
		for k, v := range kwargs {
			d.AsDict().Set(k, v)
		}
		return percentFormat(args[0].AsString(), d)
	}
	return percentFormat(args[0].AsString(), NewList(args[1:]))
}
