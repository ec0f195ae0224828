package constraint

import "govllm/internal/tokenizer"

// TokenizerVocab adapts a *tokenizer.Tokenizer to Vocabulary.
type TokenizerVocab struct{ T *tokenizer.Tokenizer }

// Size is the tokenizer's vocabulary size.
func (v TokenizerVocab) Size() int { return v.T.VocabSize() }

// TokenBytes is the token's decoded bytes (Piece).
func (v TokenizerVocab) TokenBytes(id int32) []byte { return []byte(v.T.Piece(id)) }

// IsSpecial reports a control token.
func (v TokenizerVocab) IsSpecial(id int32) bool { return v.T.IsSpecial(id) }

// EOSIDs are the tokenizer's end-of-sequence ids.
func (v TokenizerVocab) EOSIDs() []int32 {
	if ids := v.T.EOSIDs(); len(ids) > 0 {
		return ids
	}
	if e := v.T.EOS(); e >= 0 {
		return []int32{e}
	}
	return nil
}
