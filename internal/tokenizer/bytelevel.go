package tokenizer

import "unicode/utf8"

// byteToRune is GPT-2's bytes_to_unicode: every byte as a printable rune
// (UTF-8 encoded); runeToByte is its inverse.
var byteToRune, runeToByte = buildByteMap()

func buildByteMap() (byteToRune [256]string, runeToByte map[rune]byte) {
	runeToByte = make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		var r rune
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			r = rune(b)
		} else {
			r = rune(256 + n)
			n++
		}
		byteToRune[b] = string(r)
		runeToByte[r] = byte(b)
	}
	return byteToRune, runeToByte
}

// unmapBytes turns a byte-level vocabulary string back into raw bytes; ok is
// false when it holds a rune outside the byte alphabet.
func unmapBytes(s string) (b []byte, ok bool) {
	b = make([]byte, 0, len(s))
	for _, r := range s {
		c, found := runeToByte[r]
		if !found {
			return nil, false
		}
		b = append(b, c)
	}
	return b, true
}

func decodeRuneInString(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
