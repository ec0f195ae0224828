package pooling

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Type is how the rows of a prompt become one vector (vLLM PoolingType).
type Type uint8

const (
	// Last takes the last prompt token's hidden state (vLLM's default
	// for a decoder model served for embeddings).
	Last Type = iota
	// Mean averages every prompt token's hidden state.
	Mean
	// CLS takes the first token's hidden state.
	CLS
)

var typeNames = [...]string{Last: "LAST", Mean: "MEAN", CLS: "CLS"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// ParseType reads vLLM's pooling_type name (case-insensitive).
func ParseType(s string) (Type, error) {
	for t, n := range typeNames {
		if strings.EqualFold(s, n) {
			return Type(t), nil
		}
	}
	return 0, fmt.Errorf("pooling_type %q is not supported (LAST, MEAN or CLS)", s)
}

// NeedsAllTokens reports whether every prompt token's hidden state is
// needed (MEAN, CLS): such a request cannot take its prefix from the
// prefix cache, which holds K/V but no hidden states. LAST needs only the
// last token, which is always computed.
func (t Type) NeedsAllTokens() bool { return t != Last }

// Params is one embedding request's pooling (vLLM PoolingParams).
type Params struct {
	Type      Type
	Normalize bool // L2-normalize the pooled vector
}

// Default is vLLM's pooler for a decoder model served for embeddings
// (--convert embed): LAST, normalized.
func Default() Params { return Params{Type: Last, Normalize: true} }

// config is the part of vLLM's PoolerConfig govllm honours.
type config struct {
	PoolingType *string `json:"pooling_type"`
	Normalize   *bool   `json:"normalize"`
}

// ParseConfig reads vLLM's --pooler-config JSON over def: pooling_type
// (LAST, MEAN or CLS) and normalize. Any other key of vLLM's PoolerConfig
// (dimensions, softmax, step_tag_id, …) is refused, since nothing here
// would honour it.
func ParseConfig(s string, def Params) (Params, error) {
	var c config
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return def, fmt.Errorf("pooler config %q: %w (supported keys: pooling_type, normalize)", s, err)
	}
	if dec.More() {
		return def, fmt.Errorf("pooler config %q: data after the JSON object", s)
	}
	p := def
	if c.PoolingType != nil {
		t, err := ParseType(*c.PoolingType)
		if err != nil {
			return def, err
		}
		p.Type = t
	}
	if c.Normalize != nil {
		p.Normalize = *c.Normalize
	}
	return p, nil
}
