package tokenizer

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// pretokKind is one pattern of a pre-tokenizer, as Hugging Face's Split
// with behaviour Isolated (and llama.cpp's regex lists) apply it: the text
// is cut into the pattern's matches and the gaps between them. A
// pre-tokenizer is a sequence of them, each applied to every piece the
// previous one produced (splitText). Each is a hand-written state machine
// equivalent to its regex (Go's regexp has no lookahead, which these
// regexes need).
type pretokKind uint8

const (
	// pretokNone: the whole text is one word.
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
	// pretokQwen35: as Qwen2 with marks as letters (qwen35Pattern).
	pretokQwen35
	// pretokSeedCoder: as Qwen2 without newlines after a punctuation run
	// (seedCoderPattern).
	pretokSeedCoder
	// pretokNumber: \p{N} (Hugging Face Digits with individual_digits).
	pretokNumber
	// pretokNumbers: \p{N}+ (Digits without individual_digits).
	pretokNumbers
	// pretokThreeDigits: [0-9][0-9][0-9].
	pretokThreeDigits
	// pretokPunctSymbols: [\p{P}\$\+<=>\^~\|`]+ (Falcon; Hugging Face
	// Punctuation with behaviour Contiguous: Unicode or ASCII punctuation).
	pretokPunctSymbols
	// pretokPunctSymbolsDefault: [\p{P}\$\+<=>\^~\|]+ (llama.cpp's
	// default BPE pre-tokenizer; no backtick).
	pretokPunctSymbolsDefault
	// pretokNewline: [\r\n].
	pretokNewline
	// pretokSpaceLetters: \s?\p{L}+.
	pretokSpaceLetters
	// pretokSpacePunct: \s?\p{P}+.
	pretokSpacePunct
	// pretokCJK: [一-龥ࠀ-一가-퟿]+ (DeepSeek).
	pretokCJK
	// pretokDeepSeekLetters: \s?[A-Za-zµÀ-ÖØ-öø-ƺ...]+ (deepSeekLetterClass).
	pretokDeepSeekLetters
	// pretokDeepSeekPunct: \s?[!-/:-~！-／：-～‘-‟　-。]+.
	pretokDeepSeekPunct
	// pretokTrailingSpace: \s+$.
	pretokTrailingSpace
	// pretokNumbers3: \p{N}{1,3}.
	pretokNumbers3
	// pretokCJKKana: [一-龥぀-ゟ゠-ヿ]+ (DeepSeek V3).
	pretokCJKKana
	// pretokDeepSeekV3: DeepSeek V3's main regex (deepSeekV3Pattern).
	pretokDeepSeekV3
	// pretokTekken: Mistral's Tekken regex (tekkenPattern): words split
	// before an upper-case run.
	pretokTekken
	// pretokGPT4o: GPT-4o's and Llama 4's (gpt4oPattern): Tekken's with
	// contractions kept on the word and up to 3 digits.
	pretokGPT4o
	// pretokPunctSymbol: one character of pretokPunctSymbols (Hugging Face
	// Punctuation with behaviour Isolated).
	pretokPunctSymbol
	// pretokBloom: BLOOM's (llama.cpp's form)
	//   ?[^(\s|.,!?…。，、।۔،)]+
	pretokBloom

	pretokLast = pretokBloom // the last pattern (tests iterate over all)
)

// The regexes, as written in tokenizer.json files.
const (
	gpt2Pattern      = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	llama3Pattern    = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Pattern     = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen35Pattern    = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	seedCoderPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`
	// deepSeekLetterClass and deepSeekPunctClass are the character classes
	// of DeepSeek LLM's pre-tokenizer, as its tokenizer.json writes them
	// (the letters that Unicode normalization would change are escaped, so
	// that no editor can change them).
	deepSeekLetterClass = "[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]"
	deepSeekPunctClass  = `[!-/:-~！-／：-～‘-‟　-。]`
	cjkClass            = `[一-龥ࠀ-一가-퟿]`
	tekkenPattern       = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	gpt4oPattern        = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cjkKanaClass        = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]"
	// deepSeekV3Pattern holds CR and LF themselves, as tokenizer.json does.
	deepSeekV3Pattern = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// splitPatterns maps the Split regexes this package implements to their
// state machines.
var splitPatterns = map[string]pretokKind{
	gpt2Pattern:                       pretokGPT2,
	llama3Pattern:                     pretokLlama3,
	qwen2Pattern:                      pretokQwen2,
	`\p{N}`:                           pretokNumber,
	`\p{N}+`:                          pretokNumbers,
	`[0-9][0-9][0-9]`:                 pretokThreeDigits,
	`[\r\n]`:                          pretokNewline,
	`\s?\p{L}+`:                       pretokSpaceLetters,
	`\s?\p{P}+`:                       pretokSpacePunct,
	cjkClass + `+`:                    pretokCJK,
	`\s?` + deepSeekLetterClass + `+`: pretokDeepSeekLetters,
	`\s?` + deepSeekPunctClass + `+`:  pretokDeepSeekPunct,
	`\s+$`:                            pretokTrailingSpace,
	`\p{N}{1,3}`:                      pretokNumbers3,
	cjkKanaClass + "+":                pretokCJKKana,
	deepSeekV3Pattern:                 pretokDeepSeekV3,
	qwen35Pattern:                     pretokQwen35,
	seedCoderPattern:                  pretokSeedCoder,
	tekkenPattern:                     pretokTekken,
	gpt4oPattern:                      pretokGPT4o,
}

// The character classes, parsed once.
var (
	deepSeekLetters = parseClass(deepSeekLetterClass)
	deepSeekPunct   = parseClass(deepSeekPunctClass)
	cjk             = parseClass(cjkClass)
	cjkKana         = parseClass(cjkKanaClass)
)

// runeClass is a regex character class of literal runes and ranges.
type runeClass [][2]rune

// parseClass parses a class written "[...]" of literal runes and ranges
// "a-b" (no escapes, no negation: the classes above need none).
func parseClass(s string) runeClass {
	rs := []rune(s)
	if len(rs) < 2 || rs[0] != '[' || rs[len(rs)-1] != ']' {
		panic("tokenizer: bad character class " + s)
	}
	rs = rs[1 : len(rs)-1]
	var c runeClass
	for i := 0; i < len(rs); i++ {
		if rs[i] == '\\' || rs[i] == '^' && i == 0 {
			panic("tokenizer: unsupported character class " + s)
		}
		if i+2 < len(rs) && rs[i+1] == '-' {
			if rs[i] > rs[i+2] {
				panic("tokenizer: range out of order in character class " + s)
			}
			c = append(c, [2]rune{rs[i], rs[i+2]})
			i += 2
			continue
		}
		c = append(c, [2]rune{rs[i], rs[i]})
	}
	// Sorted and merged, for a binary search.
	slices.SortFunc(c, func(a, b [2]rune) int { return cmp.Compare(a[0], b[0]) })
	merged := c[:0]
	for _, rg := range c {
		if k := len(merged) - 1; k >= 0 && rg[0] <= merged[k][1]+1 {
			merged[k][1] = max(merged[k][1], rg[1])
			continue
		}
		merged = append(merged, rg)
	}
	return merged
}

func (c runeClass) has(r rune) bool {
	lo, hi := 0, len(c) // the first range ending at or after r is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m][1] < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(c) && c[lo][0] <= r
}

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

// classAtMarks is classAt with, when marks, the marks (\p{M}) as letters:
// Qwen3.5's [\p{L}\p{M}]+ words.
func classAtMarks(s string, i int, marks bool) (cls int, r rune, n int) {
	cls, r, n = classAt(s, i)
	if marks && cls == clsOther && r >= utf8.RuneSelf && unicode.IsMark(r) {
		cls = clsLetter
	}
	return cls, r, n
}

// runOf returns the end of the run of class cls starting at i.
func runOf(s string, i, cls int) int { return runOfMarks(s, i, cls, false) }

// runOfMarks is runOf with the rune classes of classAtMarks.
func runOfMarks(s string, i, cls int, marks bool) int {
	for {
		c, _, n := classAtMarks(s, i, marks)
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

// total reports whether k's pattern matches at every position of any text
// (so a split leaves no gaps; FuzzSplitText holds it).
func (k pretokKind) total() bool {
	switch k {
	case pretokGPT2, pretokLlama3, pretokQwen2, pretokQwen35, pretokSeedCoder, pretokTekken, pretokGPT4o:
		return true
	}
	return false
}

// next returns the end of the match of k's pattern that starts at s[i]
// (i < len(s)), i when none starts there.
func (k pretokKind) next(s string, i int) int {
	switch k {
	case pretokGPT2:
		return nextGPT2(s, i)
	case pretokLlama3:
		return nextLlama3(s, i, llama3Opts{maxDigits: 3})
	case pretokQwen2:
		return nextLlama3(s, i, llama3Opts{maxDigits: 1})
	case pretokQwen35:
		return nextLlama3(s, i, llama3Opts{maxDigits: 1, marks: true})
	case pretokSeedCoder:
		return nextLlama3(s, i, llama3Opts{maxDigits: 1, noNewlines: true})
	case pretokNumber:
		if c, _, n := classAt(s, i); c == clsNumber {
			return i + n
		}
		return i
	case pretokNumbers:
		return runOf(s, i, clsNumber)
	case pretokThreeDigits:
		if i+3 <= len(s) && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
			return i + 3
		}
		return i
	case pretokPunctSymbols:
		return runFunc(s, i, isPunctSymbol)
	case pretokPunctSymbol:
		if r, n := utf8.DecodeRuneInString(s[i:]); isPunctSymbol(r) {
			return i + n
		}
		return i
	case pretokPunctSymbolsDefault:
		return runFunc(s, i, func(r rune) bool { return r != '`' && isPunctSymbol(r) })
	case pretokNewline:
		if s[i] == '\r' || s[i] == '\n' {
			return i + 1
		}
		return i
	case pretokSpaceLetters:
		return optSpaceRun(s, i, unicode.IsLetter)
	case pretokSpacePunct:
		return optSpaceRun(s, i, unicode.IsPunct)
	case pretokCJK:
		return runFunc(s, i, cjk.has)
	case pretokDeepSeekLetters:
		return optSpaceRun(s, i, deepSeekLetters.has)
	case pretokDeepSeekPunct:
		return optSpaceRun(s, i, deepSeekPunct.has)
	case pretokNumbers3:
		j := i
		for d := 0; d < 3; d++ {
			c, _, n := classAt(s, j)
			if c != clsNumber {
				break
			}
			j += n
		}
		return j
	case pretokCJKKana:
		return runFunc(s, i, cjkKana.has)
	case pretokDeepSeekV3:
		return nextDeepSeekV3(s, i)
	case pretokBloom:
		j := i
		if s[i] == ' ' {
			j++
		}
		if k := runFunc(s, j, notBloomStop); k > j {
			return k
		}
		return i
	case pretokTekken:
		return nextCased(s, i, 1, false)
	case pretokGPT4o:
		return nextCased(s, i, 3, true)
	case pretokTrailingSpace:
		if runOf(s, i, clsSpace) == len(s) {
			return len(s)
		}
		return i
	}
	return len(s)
}

// notBloomStop: not in BLOOM's [(\s|.,!?…。，、।۔،)] (the parentheses and
// bar are literal there).
func notBloomStop(r rune) bool {
	switch r {
	case '(', '|', '.', ',', '!', '?', ')', '\u2026', '\u3002', '\uff0c', '\u3001', '\u0964', '\u06d4', '\u060c':
		return false
	}
	return !unicode.IsSpace(r)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isPunctSymbol: Unicode punctuation or an ASCII punctuation character
// (Hugging Face's is_punctuation; [\p{P}\$\+<=>\^~\|`] in llama.cpp).
func isPunctSymbol(r rune) bool {
	return unicode.IsPunct(r) || r < utf8.RuneSelf && unicode.IsSymbol(r)
}

// runFunc returns the end of the run of runes satisfying in from i.
func runFunc(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += n
	}
	return i
}

// optSpaceRun matches \s?X+ at i, X the runes satisfying in.
func optSpaceRun(s string, i int, in func(rune) bool) int {
	if j := runFunc(s, i, in); j > i {
		return j
	}
	if c, _, n := classAt(s, i); c == clsSpace {
		if j := runFunc(s, i+n, in); j > i+n {
			return j
		}
	}
	return i
}

// wordSink receives the words of a pre-tokenized text.
type wordSink interface{ word(w string) }

// splitText cuts text with each pattern of steps in turn (each applied to
// the pieces of the previous one: matches and the gaps between them) and
// hands the final pieces to sink. No steps: text is one word.
func splitText(steps []pretokKind, text string, sink wordSink) {
	if len(steps) == 0 {
		if text != "" {
			sink.word(text)
		}
		return
	}
	k, rest := steps[0], steps[1:]
	gap := 0
	for i := 0; i < len(text); {
		j := k.next(text, i)
		if j <= i {
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
			continue
		}
		if gap < i {
			splitText(rest, text[gap:i], sink)
		}
		splitText(rest, text[i:j], sink)
		i, gap = j, j
	}
	if gap < len(text) {
		splitText(rest, text[gap:], sink)
	}
}

// nextDeepSeekV3 matches, at s[i], DeepSeek V3's
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|
//	[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|
//	\s*[\r\n]+|\s+(?!\S)|\s+
func nextDeepSeekV3(s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < utf8.RuneSelf && isPunctSymbol(r) && i+1 < len(s) && isASCIILetter(s[i+1]) {
		j := i + 1
		for j < len(s) && isASCIILetter(s[j]) {
			j++
		}
		return j
	}
	isLM := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsMark(r) }
	isPS := func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
	if r != '\r' && r != '\n' && !unicode.IsLetter(r) && !isPS(r) {
		if j := runFunc(s, i+n, isLM); j > i+n {
			return j
		}
	}
	if isLM(r) {
		return runFunc(s, i, isLM)
	}
	j := i
	if r == ' ' {
		j++
	}
	if k := runFunc(s, j, isPS); k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k
	}
	if c, _, _ := classAt(s, i); c == clsSpace {
		return newlineOrSpaceRun(s, i)
	}
	return i
}

// nextCased matches Tekken's (contractions false, maxDigits 1) or GPT-4o's
// (true, 3) regex at s[i]:
//
//	X?U*L+C?|X?U+L*C?|\p{N}{1,maxDigits}| ?[^\s\p{L}\p{N}]+[\r\n/]*|
//	\s*[\r\n]+|\s+(?!\S)|\s+
//
// X = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// L = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C = (?i:'s|'t|'re|'ve|'m|'ll|'d).
func nextCased(s string, i, maxDigits int, contractions bool) int {
	if j := casedWord(s, i); j > i {
		if contractions && j < len(s) && s[j] == '\'' {
			j += contraction(s, j, true)
		}
		return j
	}
	c, r, n := classAt(s, i)
	switch {
	case c == clsNumber:
		j := i + n
		for d := 1; d < maxDigits; d++ {
			c2, _, n2 := classAt(s, j)
			if c2 != clsNumber {
				break
			}
			j += n2
		}
		return j
	case c == clsOther || r == ' ':
		j := i + n
		if c != clsOther {
			if c2, _, _ := classAt(s, j); c2 != clsOther {
				return newlineOrSpaceRun(s, i)
			}
		}
		j = runOf(s, j, clsOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	case c == clsSpace:
		return newlineOrSpaceRun(s, i)
	}
	return i
}

func isUpperish(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

func isLowerish(r rune) bool {
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// casedWord matches X?U*L+|X?U+L* (see nextCased) at s[i]; i when neither
// matches. The alternatives are tried as a backtracking regex engine does:
// the first with X taken, then without, then the second likewise.
func casedWord(s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	starts := [2]int{-1, i}
	if r != '\r' && r != '\n' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
		starts[0] = i + n
	}
	for _, p := range starts {
		if p < 0 {
			continue
		}
		// U*L+: U* takes the upper run; L+ then continues it, or, when no
		// L follows, U* gives back down to its last character that is
		// also an L.
		q, lastL := p, -1
		for q < len(s) {
			r, n := utf8.DecodeRuneInString(s[q:])
			if !isUpperish(r) {
				break
			}
			q += n
			if isLowerish(r) {
				lastL = q
			}
		}
		if j := runFunc(s, q, isLowerish); j > q {
			return j
		}
		if lastL > 0 {
			return lastL
		}
	}
	for _, p := range starts {
		if p < 0 {
			continue
		}
		if q := runFunc(s, p, isUpperish); q > p {
			return runFunc(s, q, isLowerish)
		}
	}
	return i
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

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

// llama3Opts are the variants of the Llama 3 regex: how many digits make a
// number word, marks as letters (Qwen3.5), and no newlines after a
// punctuation run (Seed-Coder).
type llama3Opts struct {
	maxDigits  int
	marks      bool
	noNewlines bool
}

func nextLlama3(s string, i int, o llama3Opts) int {
	c, r, n := classAtMarks(s, i, o.marks)
	if r == '\'' {
		if k := contraction(s, i, true); k > 0 {
			return i + k
		}
	}
	switch c {
	case clsLetter:
		return runOfMarks(s, i+n, clsLetter, o.marks)
	case clsNumber:
		j := i + n
		for d := 1; d < o.maxDigits; d++ {
			c2, _, n2 := classAtMarks(s, j, o.marks)
			if c2 != clsNumber {
				break
			}
			j += n2
		}
		return j
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if r != '\r' && r != '\n' {
		if c2, _, _ := classAtMarks(s, i+n, o.marks); c2 == clsLetter {
			return runOfMarks(s, i+n, clsLetter, o.marks)
		}
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j := -1
	if c == clsOther {
		j = runOfMarks(s, i+n, clsOther, o.marks)
	} else if r == ' ' {
		if c2, _, _ := classAtMarks(s, i+1, o.marks); c2 == clsOther {
			j = runOfMarks(s, i+1, clsOther, o.marks)
		}
	}
	if j >= 0 {
		for !o.noNewlines && j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	return newlineOrSpaceRun(s, i)
}

// newlineOrSpaceRun matches \s*[\r\n]+|\s+(?!\S)|\s+ at s[i], a space:
// up to the last newline of the whitespace run, else spaceRun.
func newlineOrSpaceRun(s string, i int) int {
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
