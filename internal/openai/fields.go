package openai

import (
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"govllm/internal/apierr"
)

// unsupported are the vLLM request fields govllm does not implement. A
// request that sets one to anything but null or one of its defaults (the
// values that ask for nothing) is refused with a 400 naming it, whatever
// --allow-unknown-fields says: these fields are known, and ignoring one
// would answer something the client did not ask for.
var unsupported = map[string]struct {
	msg      string
	defaults []string // JSON values that ask for nothing, besides null
}{
	"use_beam_search":            {"beam search is not supported", []string{"false"}},
	"length_penalty":             {"length_penalty applies to beam search, which is not supported", []string{"1"}},
	"prompt_embeds":              {"prompt embeddings are not supported", nil},
	"guided_decoding_backend":    {"choosing a structured-output backend is not supported (govllm has one)", []string{`""`, `"auto"`}},
	"guided_whitespace_pattern":  {"guided_whitespace_pattern is not supported", nil},
	"structural_tag":             {"structural tags are not supported", nil},
	"logits_processors":          {"custom logits processors are not supported", []string{"[]"}},
	"return_tokens_as_token_ids": {"return_tokens_as_token_ids is not supported", []string{"false"}},
	"cache_salt":                 {"cache_salt is not supported", nil},
	"kv_transfer_params":         {"kv_transfer_params (disaggregated serving) is not supported", nil},
	"vllm_xargs":                 {"vllm_xargs (parameters of custom extensions) is not supported", []string{"{}"}},
	"documents":                  {"documents (retrieval-augmented chat templates) are not supported", nil},
	"mm_processor_kwargs":        {"multimodal inputs are not supported", nil},
	"media_io_kwargs":            {"multimodal inputs are not supported", nil},
	"reasoning_effort":           {"reasoning_effort is not supported", nil},
	"include_reasoning":          {"include_reasoning false is not supported (no reasoning parser is configured)", []string{"true"}},
}

// DecodeRequest is Decode for a request body whose top-level fields are
// checked against v's: a vLLM field govllm does not implement, set to
// anything but its default, is a 400 naming it; a field that is neither
// v's nor vLLM's is a 400 naming it, unless onUnknown is non-nil (then it
// is called with the field's name and the field is accepted). Fields are
// checked in name order, so the error is deterministic.
func DecodeRequest(r io.Reader, v any, onUnknown func(field string)) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := decodeBody(body, v); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return decodeError(err)
	}
	known := fieldNames(reflect.TypeOf(v))
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if err := checkField(name, fields[name]); err != nil {
			return err
		}
		if known[name] || unsupportedField(name) {
			continue
		}
		if onUnknown == nil {
			return apierr.New(name, "unrecognized request argument supplied: %s", name)
		}
		onUnknown(name)
	}
	return nil
}

func unsupportedField(name string) bool {
	_, ok := unsupported[name]
	return ok
}

// checkField refuses an unsupported field set to a value that asks for
// something.
func checkField(name string, raw json.RawMessage) error {
	u, ok := unsupported[name]
	if !ok {
		return nil
	}
	var got any
	if err := json.Unmarshal(raw, &got); err != nil || got == nil {
		return nil // malformed JSON was reported by decodeBody
	}
	for _, d := range u.defaults {
		var want any
		if json.Unmarshal([]byte(d), &want) == nil && reflect.DeepEqual(got, want) {
			return nil
		}
	}
	return apierr.New(name, "%s", u.msg)
}

var fieldCache sync.Map // reflect.Type → map[string]bool

// fieldNames returns the JSON names of t's fields (t a struct or a pointer
// to one), those of embedded structs included.
func fieldNames(t reflect.Type) map[string]bool {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]bool)
	}
	names := map[string]bool{}
	addFields(names, t)
	fieldCache.Store(t, names)
	return names
}

func addFields(names map[string]bool, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			addFields(names, f.Type)
		case name != "" && name != "-":
			names[name] = true
		case f.IsExported():
			names[f.Name] = true
		}
	}
}
