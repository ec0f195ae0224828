package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// hfFile is the part of a Hugging Face tokenizer.json this package reads.
type hfFile struct {
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
		LStrip  bool   `json:"lstrip"`
		RStrip  bool   `json:"rstrip"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    *hfComponent `json:"normalizer"`
	PreTokenizer  *hfComponent `json:"pre_tokenizer"`
	PostProcessor *hfComponent `json:"post_processor"`
	Decoder       *hfComponent `json:"decoder"`
	Model         hfModel      `json:"model"`
}

// hfModel is a tokenizer.json's model.
type hfModel struct {
	Type string `json:"type"`
	// RawVocab: {piece: id} (BPE, WordPiece) or [[piece, score], ...]
	// (Unigram), read into Vocab and Scores.
	RawVocab     json.RawMessage  `json:"vocab"`
	Vocab        map[string]int32 `json:"-"`
	Scores       []float64        `json:"-"`
	UnkID        *int32           `json:"unk_id"` // Unigram
	Merges       json.RawMessage  `json:"merges"`
	UnkToken     *string          `json:"unk_token"`
	ByteFallback bool             `json:"byte_fallback"`
	IgnoreMerges bool             `json:"ignore_merges"`
	// Unsupported options, rejected when set.
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int     `json:"max_input_chars_per_word"` // WordPiece
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	Dropout                 *float64 `json:"dropout"`
}

// readVocab reads RawVocab: a {piece: id} object, or a Unigram list of
// [piece, score] pairs (id = index).
func (m *hfModel) readVocab() error {
	if len(m.RawVocab) == 0 || bytes.Equal(m.RawVocab, []byte("null")) {
		return nil
	}
	if m.RawVocab[0] == '{' {
		return json.Unmarshal(m.RawVocab, &m.Vocab)
	}
	var list [][2]json.RawMessage
	if err := json.Unmarshal(m.RawVocab, &list); err != nil {
		return err
	}
	m.Vocab = make(map[string]int32, len(list))
	m.Scores = make([]float64, len(list))
	for i, e := range list {
		var piece string
		if err := errors.Join(json.Unmarshal(e[0], &piece), json.Unmarshal(e[1], &m.Scores[i])); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if _, dup := m.Vocab[piece]; !dup {
			m.Vocab[piece] = int32(i)
		}
	}
	return nil
}

// hfComponent is any normalizer, pre-tokenizer, post-processor or decoder.
type hfComponent struct {
	Type          string        `json:"type"`
	Normalizers   []hfComponent `json:"normalizers"`
	Pretokenizers []hfComponent `json:"pretokenizers"`
	Processors    []hfComponent `json:"processors"`
	Decoders      []hfComponent `json:"decoders"`
	Prepend       string        `json:"prepend"`
	Pattern       struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content          string `json:"content"`
	Start            int    `json:"start"`
	Replacement      string `json:"replacement"`
	StripLeft        bool   `json:"strip_left"`
	IndividualDigits bool   `json:"individual_digits"`
	StripRight       bool   `json:"strip_right"`
	AddPrefixSpace   *bool  `json:"add_prefix_space"`
	PrependScheme    string `json:"prepend_scheme"`
	UseRegex         *bool  `json:"use_regex"`
	Split            *bool  `json:"split"`
	Behavior         string `json:"behavior"`
	Invert           bool   `json:"invert"`
	Single           []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int32 `json:"ids"`
	} `json:"special_tokens"`
	// BertNormalizer.
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
	// BertProcessing: [token, id].
	Cls []json.RawMessage `json:"cls"`
	Sep []json.RawMessage `json:"sep"`
}

// walk visits c and every component nested in it.
func (c *hfComponent) walk(fn func(*hfComponent)) {
	if c == nil {
		return
	}
	fn(c)
	for _, l := range [][]hfComponent{c.Normalizers, c.Pretokenizers, c.Processors, c.Decoders} {
		for i := range l {
			l[i].walk(fn)
		}
	}
}

// hfConfig is the part of tokenizer_config.json this package reads.
type hfConfig struct {
	BOSToken     hfTokenString   `json:"bos_token"`
	EOSToken     hfTokenString   `json:"eos_token"`
	AddBOSToken  *bool           `json:"add_bos_token"`
	AddEOSToken  *bool           `json:"add_eos_token"`
	ChatTemplate json.RawMessage `json:"chat_template"`
}

// hfTokenString is a token given as a string or as {"content": ...}.
type hfTokenString string

func (s *hfTokenString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '{' {
		var v struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = hfTokenString(v.Content)
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = hfTokenString(v)
	return nil
}

// hfGenerationConfig is the part of generation_config.json this package reads.
type hfGenerationConfig struct {
	BOSTokenID *int32          `json:"bos_token_id"`
	EOSTokenID json.RawMessage `json:"eos_token_id"` // int or list
}

// loadHF reads a tokenizer.json, and tokenizer_config.json,
// generation_config.json and chat_template.jinja from dir when present.
func loadHF(path, dir string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var cfg hfConfig
	if err := readOptionalJSON(filepath.Join(dir, "tokenizer_config.json"), &cfg); err != nil {
		return nil, err
	}
	var gen hfGenerationConfig
	if err := readOptionalJSON(filepath.Join(dir, "generation_config.json"), &gen); err != nil {
		return nil, err
	}
	t, err := parseHF(path, b, &cfg, &gen)
	if err != nil {
		return nil, err
	}
	if t.chatTemplate == "" {
		if tpl, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
			t.chatTemplate = string(tpl)
		}
	}
	return t, nil
}

func readOptionalJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	return nil
}

func parseHF(path string, b []byte, cfg *hfConfig, gen *hfGenerationConfig) (*Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if err := f.Model.readVocab(); err != nil {
		return nil, fmt.Errorf("%w: %s: model vocab: %w", ErrFormat, path, err)
	}
	unsupported := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrUnsupported, path, fmt.Sprintf(format, args...))
	}
	m := &f.Model
	switch m.Type {
	case "WordPiece":
		return parseHFWordPiece(path, &f, cfg, gen, unsupported)
	case "Unigram":
		return parseHFUnigram(path, &f, cfg, gen, unsupported)
	}
	if m.Type != "BPE" && !(m.Type == "" && m.Merges != nil) {
		return nil, unsupported("model type %q (supported: BPE, WordPiece, Unigram)", m.Type)
	}
	if (m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "") || (m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "") || (m.Dropout != nil && *m.Dropout != 0) {
		return nil, unsupported("BPE with continuing_subword_prefix, end_of_word_suffix or dropout")
	}
	pl, err := f.pipeline(unsupported)
	if err != nil {
		return nil, err
	}
	entries, added, err := f.entries(path, pl.kind)
	if err != nil {
		return nil, err
	}
	t := newTokenizer(pl.kind, entries)
	t.addAdded(added)
	pairs, err := parseMerges(m.Merges)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: merges: %w", ErrFormat, path, err)
	}
	if err := t.setMerges(pairs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.applyPipeline(pl)
	t.ignoreMerges = m.IgnoreMerges
	return t.finishHF(&f, cfg, gen, len(entries))
}

// applyPipeline sets what the normalizer, pre-tokenizer and decoder say.
func (t *Tokenizer) applyPipeline(pl hfPipeline) {
	t.pretok = pl.pretok
	t.norm = pl.norm
	t.prefixSpace = pl.prepend || pl.bytePrefix
	t.prefixFirstOnly = pl.firstOnly
	t.prefixUnlessSpace = pl.metaspace
	t.splitEverySpace = pl.splitSpace
	t.stripLeading = pl.stripLeading && pl.kind == kindSPM
}

// addAdded makes a tokenizer.json's added tokens recognised in text.
func (t *Tokenizer) addAdded(added []specialTok) {
	for _, s := range added {
		t.vocab[s.s] = s.id
		t.special.add(s)
	}
}

// finishHF sets the unknown token and the special tokens of a
// tokenizer.json, and finishes t.
func (t *Tokenizer) finishHF(f *hfFile, cfg *hfConfig, gen *hfGenerationConfig, size int) (*Tokenizer, error) {
	if m := &f.Model; m.UnkToken != nil {
		if id, ok := t.vocab[*m.UnkToken]; ok {
			t.unk = id
		}
	}
	if err := t.setHFSpecials(f, cfg, gen, size); err != nil {
		return nil, err
	}
	t.finish()
	return t, nil
}

// hfPipeline is what a tokenizer.json's normalizer, pre-tokenizer and
// decoder say about the algorithm.
type hfPipeline struct {
	kind         kind
	pretok       []pretokKind
	metaspace    bool // a Metaspace pre-tokenizer (else the Prepend+Replace normalizer)
	prepend      bool // prepend '▁' to a text segment
	firstOnly    bool // only to the segment at the start of the text
	splitSpace   bool // each '▁' starts a word
	stripLeading bool // the decoder drops one leading space
	norm         []normStep
	bytePrefix   bool // byte-level: a space before each segment not starting with one
}

// pipeline reads the algorithm from the normalizer, pre-tokenizer and
// decoder; anything this package does not implement is unsupported.
func (f *hfFile) pipeline(unsupported func(string, ...any) error) (hfPipeline, error) {
	var (
		pl                      hfPipeline
		byteLevel, replaceSpace bool
		normErr, preErr         error
	)
	// The SentencePiece pair Prepend("▁") + Replace(" ", "▁") is done by
	// the SPM encoder (flags); every other step is a normStep, which must
	// come before that pair (the encoder applies steps first).
	spmStep := false
	f.Normalizer.walk(func(c *hfComponent) {
		step := normStep{}
		switch c.Type {
		case "Sequence":
			return
		case "Prepend":
			if c.Prepend == "▁" {
				pl.prepend, spmStep = true, true
				return
			}
			step = normStep{kind: normPrepend, new: c.Prepend}
		case "Replace":
			if c.Pattern.String == nil {
				normErr = unsupported("normalizer Replace with a regex pattern %v", c.Pattern)
				return
			}
			if *c.Pattern.String == " " && c.Content == "▁" {
				replaceSpace, spmStep = true, true
				return
			}
			step = normStep{kind: normReplace, old: *c.Pattern.String, new: c.Content}
		case "NFC", "NFD", "NFKC", "NFKD":
			step = normStep{kind: normUnicode, form: unicodeForms[c.Type]}
		case "Lowercase":
			step = normStep{kind: normLowercase}
		case "Strip":
			step = normStep{kind: normStrip, left: c.StripLeft, right: c.StripRight}
		default:
			normErr = unsupported("normalizer %q (supported: NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Strip, Sequence)", c.Type)
			return
		}
		if spmStep {
			normErr = unsupported("normalizer %q after the SentencePiece Prepend/Replace", c.Type)
		}
		pl.norm = append(pl.norm, step)
	})
	f.PreTokenizer.walk(func(c *hfComponent) {
		switch c.Type {
		case "Sequence":
		case "ByteLevel":
			byteLevel = true
			if c.AddPrefixSpace != nil && *c.AddPrefixSpace {
				// A space before each text segment that lacks one: what
				// Hugging Face does when ByteLevel is the first
				// pre-tokenizer (later ones would prefix every piece).
				if len(pl.pretok) > 0 {
					preErr = unsupported("ByteLevel pre-tokenizer with add_prefix_space after another pre-tokenizer")
				}
				pl.bytePrefix = true
			}
			if c.UseRegex == nil || *c.UseRegex {
				pl.pretok = append(pl.pretok, pretokGPT2)
			}
		case "Split":
			if c.Pattern.String != nil && *c.Pattern.String == " " && replaceSpace {
				// Gemma: the normalizer turned every space into '▁', so
				// there is no " " left to split on.
				return
			}
			if c.Pattern.Regex == nil {
				preErr = unsupported("Split pre-tokenizer on %+v (supported: the regexes)", c.Pattern)
				return
			}
			k, ok := splitPatterns[*c.Pattern.Regex]
			if !ok {
				preErr = unsupported("Split pre-tokenizer regex %q", *c.Pattern.Regex)
				return
			}
			// Removed with invert keeps the matches and drops the gaps:
			// Isolated for a pattern that matches at every position
			// (GPT-4o's tokenizer.json writes it so).
			if !(c.Behavior == "Isolated" && !c.Invert || c.Behavior == "Removed" && c.Invert && k.total()) {
				preErr = unsupported("Split pre-tokenizer behavior %q invert %v for %q (supported: Isolated; Removed inverted for a regex matching everywhere)", c.Behavior, c.Invert, *c.Pattern.Regex)
				return
			}
			pl.pretok = append(pl.pretok, k)
		case "Digits":
			k := pretokNumbers
			if c.IndividualDigits {
				k = pretokNumber
			}
			pl.pretok = append(pl.pretok, k)
		case "Punctuation":
			switch c.Behavior {
			case "Contiguous":
				pl.pretok = append(pl.pretok, pretokPunctSymbols)
			case "Isolated", "": // Hugging Face's default
				pl.pretok = append(pl.pretok, pretokPunctSymbol)
			default:
				preErr = unsupported("Punctuation pre-tokenizer behavior %q (supported: Isolated, Contiguous)", c.Behavior)
			}
		case "Metaspace":
			if c.Replacement != "" && c.Replacement != "▁" {
				preErr = unsupported("Metaspace replacement %q", c.Replacement)
			}
			pl.metaspace = true
			pl.prepend = c.PrependScheme != "never" && (c.AddPrefixSpace == nil || *c.AddPrefixSpace)
			pl.firstOnly = c.PrependScheme == "first"
			pl.splitSpace = c.Split == nil || *c.Split
		default:
			preErr = unsupported("pre-tokenizer %q", c.Type)
		}
	})
	if normErr != nil {
		return pl, normErr
	}
	if preErr != nil {
		return pl, preErr
	}
	f.Decoder.walk(func(c *hfComponent) {
		switch c.Type {
		case "ByteLevel":
			byteLevel = true
		case "Strip":
			pl.stripLeading = pl.stripLeading || (c.Content == " " && c.Start > 0)
		case "Metaspace":
			pl.stripLeading = pl.stripLeading || c.PrependScheme != "never" && (c.AddPrefixSpace == nil || *c.AddPrefixSpace)
		}
	})
	switch {
	case byteLevel && !pl.metaspace && !replaceSpace:
		if pl.prepend {
			return pl, unsupported("a Prepend(\"▁\") normalizer with a byte-level BPE")
		}
		pl.kind = kindByteLevel
	case !byteLevel && (pl.metaspace || replaceSpace):
		if len(pl.pretok) > 0 {
			return pl, unsupported("a Split, Digits or Punctuation pre-tokenizer with a SentencePiece-style (▁) model")
		}
		pl.kind = kindSPM
	default:
		return pl, unsupported("neither a SentencePiece-style (▁) nor a byte-level BPE")
	}
	return pl, nil
}

// entries builds the vocabulary: the model's, then the added tokens (which
// may extend it), and returns the added tokens for the special matcher.
func (f *hfFile) entries(path string, k kind) ([]vocabEntry, []specialTok, error) {
	m := &f.Model
	size := 0
	for _, id := range m.Vocab {
		if int(id) >= size {
			size = int(id) + 1
		}
	}
	for _, a := range f.AddedTokens {
		if int(a.ID) >= size {
			size = int(a.ID) + 1
		}
	}
	if size == 0 || size > 1<<24 {
		return nil, nil, fmt.Errorf("%w: %s: vocabulary of %d ids", ErrFormat, path, size)
	}
	entries := make([]vocabEntry, size)
	for s, id := range m.Vocab {
		if id < 0 {
			return nil, nil, fmt.Errorf("%w: %s: negative id for %q", ErrFormat, path, s)
		}
		e := vocabEntry{piece: s}
		if _, ok := parseByteToken(s); ok && (k == kindSPM || k == kindUnigram) && m.ByteFallback {
			e.attrs = attrByte
		}
		entries[id] = e
	}
	var added []specialTok
	for _, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, nil, fmt.Errorf("%w: %s: negative id for %q", ErrFormat, path, a.Content)
		}
		e := vocabEntry{piece: a.Content, text: a.Content}
		if a.Special {
			e.attrs = attrSpecial
		} else if k == kindSPM {
			// The decoder's Replace("▁", " ") sees added tokens too
			// (Gemma's runs of '▁').
			e.text = strings.ReplaceAll(a.Content, "▁", " ")
		}
		entries[a.ID] = e
		added = append(added, specialTok{s: a.Content, id: a.ID, lstrip: a.LStrip, rstrip: a.RStrip})
	}
	return entries, added, nil
}

// setHFSpecials sets BOS, EOS, the end-of-generation ids, add_bos/add_eos
// and the chat template: tokenizer_config.json first, then the
// post-processor, then generation_config.json.
func (t *Tokenizer) setHFSpecials(f *hfFile, cfg *hfConfig, gen *hfGenerationConfig, size int) error {
	lookup := func(s hfTokenString) int32 {
		if id, ok := t.vocab[string(s)]; ok && s != "" {
			return id
		}
		return -1
	}
	t.bos, t.eos = lookup(cfg.BOSToken), lookup(cfg.EOSToken)
	postBOS := int32(-1)
	f.PostProcessor.walk(func(c *hfComponent) {
		if c.Type == "TemplateProcessing" && len(c.Single) > 0 && c.Single[0].SpecialToken != nil {
			if st, ok := c.SpecialTokens[c.Single[0].SpecialToken.ID]; ok && len(st.IDs) == 1 {
				postBOS = st.IDs[0]
			}
		}
	})
	if t.bos < 0 {
		t.bos = postBOS
	}
	if t.bos < 0 && gen.BOSTokenID != nil && int(*gen.BOSTokenID) < size {
		t.bos = *gen.BOSTokenID
	}
	if cfg.AddBOSToken != nil {
		t.addBOS = *cfg.AddBOSToken
	} else {
		t.addBOS = postBOS >= 0
	}
	if cfg.AddEOSToken != nil {
		t.addEOS = *cfg.AddEOSToken
	}
	genEOS, err := parseIDList(gen.EOSTokenID)
	if err != nil {
		return fmt.Errorf("%w: generation_config.json eos_token_id: %w", ErrFormat, err)
	}
	for _, id := range genEOS {
		if id >= 0 && int(id) < size && !containsID(t.eosIDs, id) {
			t.eosIDs = append(t.eosIDs, id)
		}
	}
	if t.eos < 0 && len(t.eosIDs) > 0 {
		t.eos = t.eosIDs[0]
	}
	t.bosToken, t.eosToken = string(cfg.BOSToken), string(cfg.EOSToken)
	if t.chatTemplate, err = parseChatTemplate(cfg.ChatTemplate); err != nil {
		return fmt.Errorf("%w: tokenizer_config.json chat_template: %w", ErrFormat, err)
	}
	return nil
}

// parseMerges reads merges as ["a b", ...] or [["a", "b"], ...].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		return splitMerges(strs)
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, err
	}
	return pairs, nil
}

// splitMerges splits merges written as "left right" (tokenizer.json's
// older form, and GGUF's tokenizer.ggml.merges).
func splitMerges(strs []string) ([][2]string, error) {
	pairs := make([][2]string, len(strs))
	for i, s := range strs {
		a, b, ok := strings.Cut(s, " ")
		if !ok {
			return nil, fmt.Errorf("merge %d %q has no space", i, s)
		}
		pairs[i] = [2]string{a, b}
	}
	return pairs, nil
}

// parseIDList reads an id or a list of ids.
func parseIDList(raw json.RawMessage) ([]int32, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var one int32
	if err := json.Unmarshal(raw, &one); err == nil {
		return []int32{one}, nil
	}
	var list []int32
	err := json.Unmarshal(raw, &list)
	return list, err
}

// parseChatTemplate reads a template string or a list of {name, template}
// (the one named "default", else the first).
func parseChatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", err
	}
	for _, e := range list {
		if e.Name == "default" {
			return e.Template, nil
		}
	}
	if len(list) > 0 {
		return list[0].Template, nil
	}
	return "", nil
}
