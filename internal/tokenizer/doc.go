// Package tokenizer turns text into token ids and back:
//
//   - SentencePiece-style BPE with byte fallback (Llama 1/2, Gemma,
//     Phi-3, Baichuan, TinyStories):
//     from a llama2.c tokenizer file (tok512.bin), a GGUF vocabulary
//     (tokenizer.ggml.model = "llama") or a Hugging Face tokenizer.json with
//     a BPE model, byte_fallback and the Prepend("▁")+Replace(" ","▁")
//     normalizer (Llama 2), the Replace(" ","▁") normalizer alone (Gemma;
//     its Split on " " then finds nothing) or a Metaspace pre-tokenizer
//     (Mistral-style);
//   - byte-level BPE (GPT-2, Llama 3, Qwen2, DeepSeek LLM/Coder/V3, Falcon,
//     StarCoder, MPT, Refact, Tekken, GPT-4o/Llama 4, ...): from GGUF
//     (tokenizer.ggml.model = "gpt2", tokenizer.ggml.merges, and
//     tokenizer.ggml.pre, which means what
//     llama.cpp's llama-vocab.cpp says: a list of regexes, ignore_merges,
//     add_bos; "default" or no key is llama.cpp's default list, not GPT-2's)
//     or a tokenizer.json with a ByteLevel (add_prefix_space too), Split,
//     Digits or Punctuation pre-tokenizer, or a Sequence of them. Each regex is a
//     hand-written state machine (Go's regexp has no lookahead) applied, in
//     turn, to every piece the previous one produced (matches and the gaps
//     between them: Split's Isolated behaviour; Removed with invert only
//     for a regex that matches everywhere). An unknown tokenizer.ggml.pre or
//     Split regex is refused, naming it. A byte the vocabulary has no token
//     for is dropped, as Hugging Face's BPE does;
//   - SentencePiece Unigram (Viterbi over piece scores; unknown runs fused
//     into one unknown token or, with byte_fallback, their byte tokens):
//     from a tokenizer.json with a Unigram model and SentencePiece-style
//     space handling (Metaspace; a Precompiled normalizer is refused);
//   - BERT's WordPiece (greedy longest match; BertNormalizer and
//     BertPreTokenizer semantics: control characters dropped, accents
//     stripped and text lowercased when the vocabulary says so, words split
//     at whitespace, punctuation and CJK ideographs; [CLS] ... [SEP] added):
//     from GGUF (tokenizer.ggml.model = "bert", llama.cpp's form, whose
//     word-initial pieces carry '▁') or a tokenizer.json with a WordPiece
//     model, BertNormalizer and BertPreTokenizer (rewritten to that form);
//   - a tokenizer.json normalizer (NFC, NFD, NFKC, NFKD, Lowercase, Replace
//     of a literal string, Prepend, Strip, Sequence) runs on each text
//     segment between special tokens, before pre-tokenization;
//   - a byte-level dummy vocabulary for the built-in random-weight model
//     (NewDummy).
//
// Configuration comes with the vocabulary: tokenizer_config.json (bos/eos
// token strings, add_bos_token, chat_template as a string or a list of
// {name, template}), generation_config.json (eos_token_id, an id or a list),
// chat_template.jinja, and the GGUF tokenizer.* keys. Anything else a
// tokenizer.json may ask for (other models, normalizers, pre-tokenizer
// regexes) is refused with ErrUnsupported rather than approximated. Known
// simplifications: an added token's single_word and normalized flags are
// ignored (it is matched in the raw text); unknown characters without
// byte fallback always fuse into one <unk>; Lowercase uses Go's simple case
// mapping (Rust's full mapping differs for a few characters such as 'İ').
//
// It also owns the incremental detokenizer (Decoder): vLLM's detokenizer
// semantics, never emitting an incomplete UTF-8 sequence.
//
// vLLM counterpart: the Hugging Face tokenizers used through transformers,
// and vllm/v1/engine/detokenizer.py.
//
// Imports: the standard library, golang.org/x/text/unicode/norm and
// internal/gguf (a format leaf) only. It
// never imports engine packages; engine packages never import it.
//
// Decoding follows Hugging Face: special tokens are skipped on request, else
// written as their text; SentencePiece models drop one leading space of the
// whole decoded text (the dummy prefix); clean_up_tokenization_spaces is not
// applied (as in vLLM's streaming detokenizer). The Decoder keeps the leading
// space of the first output token after a non-empty prompt (vLLM decodes it
// in the prompt's context), so its deltas concatenate to
// Decode(prompt+output) minus the decoded prompt; with no prompt they
// concatenate to Decode(output). Call Flush at the end of a sequence for the
// bytes of an unfinished character.
//
// Encoding follows Hugging Face tokenizers: added/special tokens written in
// the text are matched leftmost-longest first (lstrip/rstrip honoured); each
// text segment between them gets the SentencePiece '▁' prefix (Llama 2
// "legacy" behaviour, also llama.cpp's); byte-level words found whole in the
// vocabulary are one token when ignore_merges is set (Llama 3).
//
// Invariants:
//   - a *Tokenizer is immutable after Load/NewDummy and safe for concurrent
//     use; a *Decoder belongs to one goroutine;
//   - Encode merges long words with a priority queue over a linked list of
//     symbols (O(n log n)) and short ones with linear scans, so long inputs
//     stay cheap; its only allocation is the returned slice (and the
//     normalized copy of a segment that a normalizer changes);
//   - for every id sequence, the concatenated Decoder deltas equal the
//     decoded text, and every delta is valid UTF-8 (bytes that can never
//     become valid UTF-8 are replaced by U+FFFD, one per byte, exactly as in
//     Decode).
package tokenizer
