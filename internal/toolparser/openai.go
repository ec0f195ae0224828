package toolparser

import "strings"

const (
	harmonyStart   = "<|start|>"
	harmonyChannel = "<|channel|>"
	harmonyMessage = "<|message|>"
	harmonyCall    = "<|call|>"
	harmonyEnd     = "<|end|>"
	harmonyReturn  = "<|return|>"
	functionsNS    = "functions."
)

// openAI is gpt-oss's harmony format (vLLM openai_tool_parser.py): a call
// is a message to a function,
//
//	<|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>ARGS<|call|>
//
// (the recipient may also follow the channel). It expects the output to
// have passed through the gpt-oss reasoning parser, as vLLM's gpt-oss
// serving does: that leaves the final text and the messages to tools.
// JSON arguments are re-serialized as vLLM's json.dumps; other text is
// passed on as written.
type openAI struct{}

func newOpenAI([]Tool) (format, error) { return openAI{}, nil }

func (openAI) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, harmonyStart, harmonyChannel)
	return start, hold
}

func (openAI) findEnd(s string, st *scan) int {
	from := max(0, st.scanned-len(harmonyReturn)+1)
	best := -1
	for _, t := range [...]string{harmonyCall, harmonyEnd, harmonyReturn} {
		if i := strings.Index(s[from:], t); i >= 0 && (best < 0 || from+i+len(t) < best) {
			best = from + i + len(t)
		}
	}
	return best
}

func (openAI) isSep(c byte) bool { return isSpace(c) }

func (openAI) parse(region string) ([]call, bool) {
	header, body, ok := strings.Cut(region, harmonyMessage)
	if !ok {
		return nil, false
	}
	name, ok := harmonyRecipient(header)
	if !ok {
		return nil, false
	}
	for _, t := range [...]string{harmonyCall, harmonyEnd, harmonyReturn} {
		body = strings.TrimSuffix(body, t)
	}
	args := body
	if v, err := parseJSON(body); err == nil {
		args = v.dumpString()
	}
	return []call{{name: name, args: args}}, true
}

// harmonyRecipient returns the function a header addresses: the name
// after to=functions., up to a space or the next token.
func harmonyRecipient(header string) (string, bool) {
	_, to, ok := strings.Cut(header, " to="+functionsNS)
	if !ok {
		return "", false
	}
	end := len(to)
	if i := strings.IndexAny(to, " \t\n"); i >= 0 {
		end = i
	}
	if i := strings.Index(to, "<|"); i >= 0 && i < end {
		end = i
	}
	return to[:end], end > 0
}
