package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// pretokKind selects the byte-level pre-tokenizer: a hand-written state
// machine equivalent to the model's split regex (Go's regexp has no
// lookahead, which these regexes need).
type pretokKind uint8

const (
	// pretokNone: the whole segment is one word.
	pretokNone pretokKind = iota
	// pretokGPT2:
	//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
	pretokGPT2
	// pretokLlama3:
	//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
	//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	pretokLlama3
	// pretokQwen2: as Llama 3 with \p{N} (one digit per word).
	pretokQwen2
)

// The regexes, as written in tokenizer.json files.
const (
	gpt2Pattern   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// rune classes of the regexes.
const (
	clsLetter = iota // \p{L}
	clsNumber        // \p{N}
	clsSpace         // \s
	clsOther         // [^\s\p{L}\p{N}]
	clsEnd           // past the end of the text
)

// classAt returns the class and width of the rune at s[i].
func classAt(s string, i int) (cls int, r rune, n int) {
	if i >= len(s) {
		return clsEnd, 0, 0
	}
	c := s[i]
	if c < utf8.RuneSelf {
		r, n = rune(c), 1
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return clsLetter, r, n
		case c >= '0' && c <= '9':
			return clsNumber, r, n
		case c == ' ' || c >= '\t' && c <= '\r':
			return clsSpace, r, n
		}
		return clsOther, r, n
	}
	r, n = utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r):
		return clsLetter, r, n
	case unicode.IsNumber(r):
		return clsNumber, r, n
	case unicode.IsSpace(r):
		return clsSpace, r, n
	}
	return clsOther, r, n
}

// runOf returns the end of the run of class cls starting at i.
func runOf(s string, i, cls int) int {
	for {
		c, _, n := classAt(s, i)
		if c != cls {
			return i
		}
		i += n
	}
}

// contraction returns the length of a contraction ('s 't 're 've 'm 'll 'd)
// at s[i] (an apostrophe), 0 when none. foldCase: also upper case.
func contraction(s string, i int, foldCase bool) int {
	lower := func(c byte) byte {
		if foldCase && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	if i+1 >= len(s) {
		return 0
	}
	switch lower(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && lower(s[i+2]) == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && lower(s[i+2]) == 'l' {
			return 3
		}
	}
	return 0
}

// spaceRun handles \s+(?!\S)|\s+ at i (a space): the whitespace run, less
// its last character when a non-space follows and the run is longer than one.
func spaceRun(s string, i int) int {
	end := i
	last := i
	for {
		c, _, n := classAt(s, end)
		if c != clsSpace {
			break
		}
		last = end
		end += n
	}
	if end < len(s) && last > i {
		return last
	}
	return end
}

// next returns the end of the word that starts at s[i] (i < len(s)).
func (k pretokKind) next(s string, i int) int {
	switch k {
	case pretokGPT2:
		return nextGPT2(s, i)
	case pretokLlama3:
		return nextLlama3(s, i, 3)
	case pretokQwen2:
		return nextLlama3(s, i, 1)
	}
	return len(s)
}

func nextGPT2(s string, i int) int {
	c, r, n := classAt(s, i)
	if r == '\'' {
		if k := contraction(s, i, false); k > 0 {
			return i + k
		}
	}
	if r == ' ' {
		if c2, _, _ := classAt(s, i+1); c2 != clsSpace && c2 != clsEnd {
			return runOf(s, i+1, c2)
		}
	}
	if c == clsSpace {
		return spaceRun(s, i)
	}
	return runOf(s, i+n, c)
}

func nextLlama3(s string, i, maxDigits int) int {
	c, r, n := classAt(s, i)
	if r == '\'' {
		if k := contraction(s, i, true); k > 0 {
			return i + k
		}
	}
	switch c {
	case clsLetter:
		return runOf(s, i+n, clsLetter)
	case clsNumber:
		j := i + n
		for d := 1; d < maxDigits; d++ {
			c2, _, n2 := classAt(s, j)
			if c2 != clsNumber {
				break
			}
			j += n2
		}
		return j
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if r != '\r' && r != '\n' {
		if c2, _, _ := classAt(s, i+n); c2 == clsLetter {
			return runOf(s, i+n, clsLetter)
		}
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j := -1
	if c == clsOther {
		j = runOf(s, i+n, clsOther)
	} else if r == ' ' {
		if c2, _, _ := classAt(s, i+1); c2 == clsOther {
			j = runOf(s, i+1, clsOther)
		}
	}
	if j >= 0 {
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// c is a space. \s*[\r\n]+: up to the last newline of the whitespace run.
	end, nl := i, -1
	for {
		c2, r2, n2 := classAt(s, end)
		if c2 != clsSpace {
			break
		}
		if r2 == '\r' || r2 == '\n' {
			nl = end
		}
		end += n2
	}
	if nl >= 0 {
		return nl + 1
	}
	return spaceRun(s, i)
}
