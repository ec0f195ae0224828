package toolparser

import "strings"

const graniteToken = "<|tool_call|>"

// granite is IBM Granite 3.0/3.1's format (vLLM granite_tool_parser.py): a
// JSON array of {"name", "arguments"} objects after <|tool_call|> (3.0, a
// special token) or <tool_call> (3.1, plain text).
type granite struct{}

func newGranite([]Tool) (format, error) { return granite{}, nil }

func (granite) findStart(s string, _, eof bool) (int, int) {
	start, _, hold := firstMarker(s, eof, graniteToken, hermesStart)
	return start, hold
}

func (granite) findEnd(s string, st *scan) int {
	return st.jsonAfter(s, skipSpace(s, len(graniteMarker(s))))
}

func (granite) isSep(c byte) bool { return isSpace(c) }

func (granite) parse(region string) ([]call, bool) {
	return parseCallArray(strings.TrimPrefix(region, graniteMarker(region)))
}

// graniteMarker is the marker that opens region.
func graniteMarker(region string) string {
	if strings.HasPrefix(region, graniteToken) {
		return graniteToken
	}
	return hermesStart
}
