package toolparser

// scan is findEnd's progress over the open region, kept between calls so
// that a long call is scanned once, not once per delta.
type scan struct {
	scanned int // len(s) at the previous call
	found   int // an end found earlier, still waiting on what follows it

	// bracket matching: the next byte to read, the nesting depth, the
	// quote of the string being read (0 outside strings), and whether
	// the last byte was a backslash in one.
	pos, depth int
	quote      byte
	esc        bool
}

// jsonAfter returns the end of a region whose JSON object or array opens at
// s[i]: the end of that value, -1 while s ends before it does, or i itself
// when something else stands there (the region is malformed and ends).
func (st *scan) jsonAfter(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	if s[i] != '{' && s[i] != '[' {
		return i
	}
	return st.bracketEnd(s, i, false)
}

// bracketEnd returns the index just past the bracket that closes the one at
// s[i], or -1 if s ends first. Brackets inside strings do not count: JSON
// strings, or with python both quote kinds (and parentheses count too). It
// does not validate; the parse does. i must be the same on every call for
// one region.
func (st *scan) bracketEnd(s string, i int, python bool) int {
	if st.pos < i {
		st.pos, st.depth, st.quote, st.esc = i, 0, 0, false
	}
	for ; st.pos < len(s); st.pos++ {
		c := s[st.pos]
		switch {
		case st.quote != 0:
			switch {
			case st.esc:
				st.esc = false
			case c == '\\':
				st.esc = true
			case c == st.quote:
				st.quote = 0
			}
		case c == '"' || python && c == '\'':
			st.quote = c
		case c == '{' || c == '[' || python && c == '(':
			st.depth++
		case c == '}' || c == ']' || python && c == ')':
			st.depth--
			if st.depth == 0 {
				return st.pos + 1
			}
		}
	}
	return -1
}
