package openai

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"

	"govllm/internal/apierr"
)

// MaxEmbeddingInputs caps the inputs of one embeddings request: OpenAI's
// documented limit of the input array (each input is its own engine
// request, so the server's --max-request-sequences bounds it too).
const MaxEmbeddingInputs = 2048

// EmbeddingRequest is the body of POST /v1/embeddings: OpenAI's fields
// and vLLM's extras (EmbeddingCompletionRequest).
type EmbeddingRequest struct {
	Model          string         `json:"model"`
	Input          EmbeddingInput `json:"input"`
	EncodingFormat string         `json:"encoding_format"` // "float" (default) or "base64"
	Dimensions     *int           `json:"dimensions"`
	User           string         `json:"user"`

	TruncatePromptTokens *int   `json:"truncate_prompt_tokens"` // -1: the model's context
	AddSpecialTokens     *bool  `json:"add_special_tokens"`     // default true
	Priority             int    `json:"priority"`
	RequestID            string `json:"request_id"`
	Normalize            *bool  `json:"normalize"`   // overrides the pooler's
	EmbedDType           string `json:"embed_dtype"` // "float32" only
	Endianness           string `json:"endianness"`  // base64 bytes: "native" (little here), "little", "big"
}

// EmbeddingInput is "input": a string, an array of strings, an array of
// token ids, or an array of arrays of token ids (Prompt's shapes; errors
// name "input").
type EmbeddingInput Prompt

// UnmarshalJSON accepts Prompt's shapes.
func (in *EmbeddingInput) UnmarshalJSON(b []byte) error {
	return AsInput((*Prompt)(in).UnmarshalJSON(b))
}

// AsInput renames a "prompt" error to "input" (the embeddings
// endpoint's name for it).
func AsInput(err error) error {
	var e *apierr.Error
	if errors.As(err, &e) && e.Param == "prompt" {
		c := *e
		c.Param = "input"
		return &c
	}
	return err
}

// Validate checks the request's own fields: 1 to MaxEmbeddingInputs
// non-empty inputs, an encoding format, dtype and endianness that can be
// honoured, and no dimensions (the served models have a fixed size: no
// Matryoshka embeddings).
func (r *EmbeddingRequest) Validate() error {
	switch {
	case len(r.Input) == 0:
		return apierr.New("input", "is required")
	case len(r.Input) > MaxEmbeddingInputs:
		return apierr.New("input", "got %d inputs; at most %d are accepted per request", len(r.Input), MaxEmbeddingInputs)
	case r.EncodingFormat != "" && r.EncodingFormat != "float" && r.EncodingFormat != "base64":
		return apierr.New("encoding_format", "must be \"float\" or \"base64\", got %q", r.EncodingFormat)
	case r.Dimensions != nil:
		return apierr.New("dimensions", "this model does not support choosing the embedding size (no Matryoshka representation)")
	case r.EmbedDType != "" && r.EmbedDType != "float32":
		return apierr.New("embed_dtype", "only float32 is supported, got %q", r.EmbedDType)
	case r.Endianness != "" && r.Endianness != "native" && r.Endianness != "little" && r.Endianness != "big":
		return apierr.New("endianness", "must be native, little or big, got %q", r.Endianness)
	case r.TruncatePromptTokens != nil && *r.TruncatePromptTokens < -1:
		return apierr.New("truncate_prompt_tokens", "must be -1 (the model's context) or at least 1, got %d", *r.TruncatePromptTokens)
	}
	return AsInput(Prompt(r.Input).validate(MaxEmbeddingInputs))
}

// SpecialTokens is add_special_tokens (default true, as vLLM).
func (r *EmbeddingRequest) SpecialTokens() bool {
	return r.AddSpecialTokens == nil || *r.AddSpecialTokens
}

// EmbeddingResponse is the reply of POST /v1/embeddings.
type EmbeddingResponse struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"` // "list"
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Data    []EmbeddingData `json:"data"`
	Usage   *Usage          `json:"usage"`
	// Timings, with --enable-response-timings (see Timings; an input is
	// a choice).
	Timings any `json:"timings,omitempty"`
}

// EmbeddingData is one input's vector: a JSON array of numbers, or with
// encoding_format base64 the float32 values' bytes in base64.
type EmbeddingData struct {
	Index     int    `json:"index"`
	Object    string `json:"object"` // "embedding"
	Embedding any    `json:"embedding"`
}

// EncodeEmbedding renders v per the request's encoding_format and
// endianness: the floats themselves, or base64 of their float32 bytes
// (little-endian unless big is asked, as OpenAI's clients decode them).
func (r *EmbeddingRequest) EncodeEmbedding(v []float32) any {
	if r.EncodingFormat != "base64" {
		return v
	}
	var order binary.ByteOrder = binary.LittleEndian
	if r.Endianness == "big" {
		order = binary.BigEndian
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		order.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
