package toolparser

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Tool is one function of the request's tools: its name and the JSON Schema
// of its arguments object, as the request gave it (nil when absent).
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// ToolCall is one parsed call. Arguments is JSON text.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Result is the whole-text parse of a model output. Content is the text
// outside the calls; "" means none (JSON null when calls were made).
type Result struct {
	Content   string
	ToolCalls []ToolCall
}

// ToolCallDelta is one entry of an OpenAI streaming delta.tool_calls: ID
// and Name are set on the first delta of a call only, Arguments is the next
// fragment of its arguments text.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Delta is one streamed event, in output order: content text, or a piece of
// a tool call (Tool non-nil, Content empty).
type Delta struct {
	Content string
	Tool    *ToolCallDelta
}

// Options are the parts of a Parser that tests replace.
type Options struct {
	// Rand is read for tool call ids; nil means crypto/rand. It must not
	// fail, and must be safe for concurrent use if streams of one Parser
	// run concurrently.
	Rand io.Reader
}

// idStyle is how a parser names its calls, after vLLM.
type idStyle uint8

const (
	// idHex is vLLM's make_tool_call_id: "chatcmpl-tool-" and 32 hex digits.
	idHex idStyle = iota
	// idAlnum9 is mistral's MistralToolCall.generate_random_id: 9
	// characters of [a-zA-Z0-9].
	idAlnum9
)

// format is one output syntax. The Stream drives it over the text not yet
// decided; every answer must depend only on the text it is given, so that
// a longer text never changes a decision taken on a shorter one.
type format interface {
	// findStart returns the index of the first call region in s, or -1
	// and the length of the suffix of s that could still begin one (held
	// back until more text comes). atStart: s begins the output. eof: no
	// more text comes.
	findStart(s string, atStart, eof bool) (start, hold int)
	// findEnd returns the length of the region that s opens, or -1 if it
	// is not complete yet (at the end of the output the region runs to
	// the end). st carries its progress between calls on one region.
	findEnd(s string, st *scan) int
	// parse turns a region into calls; false makes the region content.
	parse(region string) ([]call, bool)
	// isSep reports whether c may stand between calls without being
	// content: a run of such bytes next to a call is dropped.
	isSep(c byte) bool
}

// call is a parsed call before it has an id.
type call struct {
	name, args string
}

type spec struct {
	markers []string
	ids     idStyle
	make    func(tools []Tool) (format, error)
}

// registry holds the parsers by vLLM's --tool-call-parser names.
var registry = map[string]spec{
	"hermes":      {markers: []string{hermesStart, hermesEnd}, make: newHermes},
	"llama3_json": {markers: []string{pythonTag}, make: newLlama3JSON},
	"mistral":     {markers: []string{mistralCalls, mistralArgs, mistralCallID}, ids: idAlnum9, make: newMistral},
	"qwen3_coder": {markers: []string{hermesStart, hermesEnd}, make: newQwen3Coder},
	"pythonic":    {make: newPythonic},
	"deepseek_v3": {markers: []string{dsCallsBegin, dsCallsEnd, dsCallBegin, dsCallEnd, dsSep}, make: newDeepSeekV3},
	"granite":     {markers: []string{graniteToken}, make: newGranite},
	"openai":      {markers: []string{harmonyStart, harmonyChannel, harmonyMessage, harmonyCall, harmonyEnd, harmonyReturn, "<|constrain|>"}, make: newOpenAI},
}

// Names lists the parser names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Parser parses one request's outputs: a format, the request's tools, and
// an id source. It is safe for concurrent use (each Stream is not).
type Parser struct {
	name string
	spec spec
	f    format
	rand io.Reader
}

// New returns the parser registered as name for a request with these tools.
func New(name string, tools []Tool, opts Options) (*Parser, error) {
	sp, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("toolparser: unknown tool call parser %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	f, err := sp.make(tools)
	if err != nil {
		return nil, err
	}
	r := opts.Rand
	if r == nil {
		r = rand.Reader
	}
	return &Parser{name: name, spec: sp, f: f, rand: r}, nil
}

// Name is the parser's registry name.
func (p *Parser) Name() string { return p.name }

// Markers are the texts the parser matches that tokenizers may hold as
// special tokens. They reach the parser only if the output is detokenized
// with skip_special_tokens=false, which is what vLLM's adjust_request sets
// when a request has tools and tool_choice is not "none"; the wiring must do
// the same whenever one of these is a special token of the model.
func (p *Parser) Markers() []string { return slices.Clone(p.spec.markers) }

// Extract parses a whole output. It is the stream's result: streaming any
// split of text and concatenating the deltas gives the same calls and
// content.
func (p *Parser) Extract(text string) Result {
	s := p.NewStream()
	deltas := s.Feed(nil, text)
	deltas = s.Finish(deltas)
	var r Result
	var content strings.Builder
	for _, d := range deltas {
		if d.Tool == nil {
			content.WriteString(d.Content)
			continue
		}
		if d.Tool.Index == len(r.ToolCalls) {
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: d.Tool.ID, Name: d.Tool.Name})
		}
		r.ToolCalls[d.Tool.Index].Arguments += d.Tool.Arguments
	}
	r.Content = content.String()
	return r
}

// newID draws a tool call id in the parser's style.
func (p *Parser) newID() string {
	switch p.spec.ids {
	case idAlnum9:
		const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		var id [9]byte
		var one [1]byte
		for i := 0; i < len(id); {
			p.read(one[:])
			if one[0] < 248 { // 4×62: no modulo bias
				id[i] = alnum[one[0]%62]
				i++
			}
		}
		return string(id[:])
	default:
		var raw [16]byte
		p.read(raw[:])
		return "chatcmpl-tool-" + hex.EncodeToString(raw[:])
	}
}

func (p *Parser) read(b []byte) {
	if _, err := io.ReadFull(p.rand, b); err != nil {
		// crypto/rand never fails; a replaced reader that does is a bug.
		panic("toolparser: tool call id source failed: " + err.Error())
	}
}
