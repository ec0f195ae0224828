package toolparser

import "strings"

// pythonic is the Python call-list format of Llama 3.2 and Llama 4 (vLLM
// pythonic_tool_parser.py): an output that begins with
// [f(a=1), g(b="x")]. Each call's keyword arguments become a JSON object;
// a call whose arguments have no JSON form (bytes, inf) is dropped, as
// vLLM drops it, and the list becomes content when no call is left or it
// is not valid Python.
type pythonic struct{}

func newPythonic([]Tool) (format, error) { return pythonic{}, nil }

func (pythonic) findStart(s string, atStart, eof bool) (int, int) {
	if !atStart {
		return -1, 0
	}
	i := skipSpace(s, 0)
	switch {
	case i < len(s) && s[i] == '[':
		return i, 0
	case i == len(s) && !eof:
		return -1, len(s) // only whitespace yet: the list may still come
	}
	return -1, 0
}

func (pythonic) findEnd(s string, st *scan) int { return st.bracketEnd(s, 0, true) }

func (pythonic) isSep(c byte) bool { return isSpace(c) }

func (pythonic) parse(region string) ([]call, bool) {
	d := pyDecoder{s: region, i: 1} // past '['
	var calls []call
	for !d.eat(']') {
		c, ok, err := d.call()
		if err != nil {
			return nil, false
		}
		if ok {
			calls = append(calls, c)
		}
		if !d.eat(',') {
			if !d.eat(']') {
				return nil, false
			}
			break
		}
	}
	d.ws()
	return calls, len(calls) > 0 && d.i == len(region)
}

// call reads name(kw=literal, …).
func (d *pyDecoder) call() (call, bool, error) {
	name := d.ident()
	good := name != "" && !(name[0] >= '0' && name[0] <= '9')
	for d.eat('.') { // a dotted name is valid Python but not a tool name
		d.ident()
		good = false
	}
	if !d.eat('(') {
		return call{}, false, errPySyntax
	}
	args := value{k: kObj}
	for !d.eat(')') {
		key := d.ident()
		if key == "" || !d.eat('=') {
			return call{}, false, errPySyntax
		}
		v, ok, err := d.literal(1)
		if err != nil {
			return call{}, false, err
		}
		good = good && ok
		args.set(key, v)
		if !d.eat(',') {
			if !d.eat(')') {
				return call{}, false, errPySyntax
			}
			break
		}
	}
	return call{name: strings.Clone(name), args: args.dumpString()}, good, nil
}
