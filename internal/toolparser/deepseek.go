package toolparser

import "strings"

const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
	dsArgsOpen   = "\n```json\n"
	dsArgsClose  = "\n```"
)

// deepSeekV3 is DeepSeek V3's special-token format (vLLM
// deepseekv3_tool_parser.py): a <｜tool▁calls▁begin｜> … <｜tool▁calls▁end｜>
// section of calls, each
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>.
// The arguments are passed on as the model wrote them (as vLLM does), once
// they are checked to be JSON.
type deepSeekV3 struct{}

func newDeepSeekV3([]Tool) (format, error) { return deepSeekV3{}, nil }

func (deepSeekV3) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, dsCallsBegin)
	return start, hold
}

func (deepSeekV3) findEnd(s string, st *scan) int { return literalEnd(s, st.scanned, dsCallsEnd) }

func (deepSeekV3) isSep(c byte) bool { return isSpace(c) }

func (deepSeekV3) parse(region string) ([]call, bool) {
	body := strings.TrimSuffix(strings.TrimPrefix(region, dsCallsBegin), dsCallsEnd)
	var calls []call
	for {
		i := strings.Index(body, dsCallBegin)
		if i < 0 {
			break
		}
		if strings.TrimSpace(body[:i]) != "" {
			return nil, false
		}
		body = body[i+len(dsCallBegin):]
		j := strings.Index(body, dsCallEnd)
		if j < 0 {
			return nil, false
		}
		c, ok := parseDeepSeekCall(body[:j])
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
		body = body[j+len(dsCallEnd):]
	}
	return calls, len(calls) > 0 && strings.TrimSpace(body) == ""
}

// parseDeepSeekCall reads TYPE<｜tool▁sep｜>NAME\n```json\nARGS\n```.
func parseDeepSeekCall(text string) (call, bool) {
	_, rest, ok := strings.Cut(text, dsSep)
	if !ok {
		return call{}, false
	}
	name, args, ok := strings.Cut(rest, dsArgsOpen)
	if !ok || name == "" || !strings.HasSuffix(args, dsArgsClose) {
		return call{}, false
	}
	args = strings.TrimSuffix(args, dsArgsClose)
	if v, err := parseJSON(args); err != nil || v.k != kObj {
		return call{}, false
	}
	return call{name: name, args: args}, true
}
