package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
)

// loadLlama2C reads a llama2.c tokenizer file: int32 max_token_length, then
// per token float32 score, int32 length, bytes - until the end of the file.
// Ids 0, 1, 2 are <unk>, BOS ("\n<s>\n") and EOS ("\n</s>\n"); pieces that
// read "<0xXX>" are byte-fallback tokens; spaces are stored as ' '.
func loadLlama2C(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return parseLlama2C(path, b)
}

func parseLlama2C(path string, b []byte) (*Tokenizer, error) {
	bad := func(off int, msg string) error {
		return fmt.Errorf("%w: %s: offset %d: %s", ErrFormat, path, off, msg)
	}
	if len(b) < 4 {
		return nil, bad(0, "too short for a header")
	}
	maxLen := int(int32(binary.LittleEndian.Uint32(b)))
	if maxLen <= 0 || maxLen > 1<<16 {
		return nil, bad(0, fmt.Sprintf("max_token_length %d", maxLen))
	}
	var entries []vocabEntry
	var scores []float32
	for off := 4; off < len(b); {
		if len(b)-off < 8 {
			return nil, bad(off, "truncated token header")
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
		n := int(int32(binary.LittleEndian.Uint32(b[off+4:])))
		off += 8
		if n < 0 || n > maxLen || n > len(b)-off {
			return nil, bad(off-4, fmt.Sprintf("token %d: length %d", len(entries), n))
		}
		piece := string(b[off : off+n])
		off += n
		e := vocabEntry{piece: strings.ReplaceAll(piece, " ", "▁")}
		id := len(entries)
		switch {
		case id <= 2:
			e.piece = strings.TrimSpace(piece)
			e.attrs = attrSpecial | attrMatch
		default:
			if _, ok := parseByteToken(piece); ok {
				e.attrs = attrByte
			}
		}
		entries = append(entries, e)
		scores = append(scores, score)
	}
	if len(entries) < 3 {
		return nil, bad(len(b), fmt.Sprintf("only %d tokens", len(entries)))
	}
	t := newTokenizer(kindSPM, entries)
	t.mergesFromScores(scores)
	t.unk, t.bos, t.eos = 0, 1, 2
	t.addBOS = true
	t.prefixSpace = true
	t.stripLeading = true
	t.finish()
	return t, nil
}
