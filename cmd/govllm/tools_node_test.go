package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// toolClientsDir holds the JavaScript tool-calling clients (package.json
// and lock file; CI runs npm ci there).
const toolClientsDir = "../../internal/toolclients/testdata/npm"

// toolClientResult is one line of a client script's output (report() in
// weather.mjs): one two-step conversation as it went over the wire.
type toolClientResult struct {
	Client        string            `json:"client"`
	Case          string            `json:"case"`
	ToolChoice    []json.RawMessage `json:"tool_choice"` // step one's, step two's
	Stream        []bool            `json:"stream"`      // whether each step streamed
	Parallel      *bool             `json:"parallel_tool_calls"`
	Parameters    json.RawMessage   `json:"parameters"` // the schema the client sent
	Arguments     string            `json:"arguments"`  // step one's call, as answered
	ToolArgs      []json.RawMessage `json:"tool_args"`  // what the tool function got
	FinishReasons []string          `json:"finish_reasons"`
	FinalText     string            `json:"final_text"`
	Problems      []string          `json:"problems"`
}

// toolClientCase is what one conversation must show: step one sent with
// this tool_choice and finished with this reason (vLLM's: "tool_calls"
// for required, "stop" for a named function, as OpenAI's API answers a
// forced function), each step streamed or not as stream says.
type toolClientCase struct {
	client, name, choice, finish string
	stream                       []bool
}

var (
	plain     = []bool{false, false}
	streamOne = []bool{true, false}
	streamAll = []bool{true, true}
)

// toolClientScripts are the scripts and the conversations each runs.
var toolClientScripts = []struct {
	script string
	cases  []toolClientCase
}{
	{"openai.mjs", []toolClientCase{
		{"openai", "required", `"required"`, "tool_calls", plain},
		{"openai", "required-streamed", `"required"`, "tool_calls", streamOne},
		{"openai", "named", `{"type":"function","function":{"name":"get_weather"}}`, "stop", plain},
	}},
	{"langchain.mjs", []toolClientCase{
		{"langchain", "required", `"required"`, "tool_calls", plain},
		{"langchain", "required-streamed", `"required"`, "tool_calls", streamAll},
	}},
	{"aisdk.mjs", []toolClientCase{
		{"ai-sdk", "required", `"required"`, "tool_calls", plain},
		{"ai-sdk", "required-streamed", `"required"`, "tool_calls", streamAll},
	}},
}

// TestToolClientsNode: real JavaScript clients complete a two-step
// weather conversation against govllm serve — the npm openai SDK's
// runTools (tool_choice "required", streamed or not, and a named
// function), LangChain JS's bindTools with tool_choice "required" and a
// ToolMessage (invoke, and stream), the AI SDK's generateText({tools}) and
// streamText with toolChoice "required" — on the random-weight
// model (only the constraint makes its calls valid) and on stories260K,
// with Qwen2.5's template and the hermes parser. Each script runs the
// tool on the call's parsed arguments, sends its result back with
// tool_choice "none" and gets text; here every call's arguments are
// validated against the tool's JSON Schema (this file's copy and the one
// the client sent), and the wire's tool_choice and finish reasons checked.
func TestToolClientsNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPING the JavaScript tool-calling clients test: node is not installed")
	}
	if _, err := os.Stat(filepath.Join(toolClientsDir, "node_modules", "ai")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `npm ci --prefix internal/toolclients/testdata/npm` (CI does)", toolClientsDir)
	}
	noLeaks(t)
	schema := compileSchema(t, weatherSchema)
	for _, m := range []string{"dummy", "stories260K"} {
		t.Run(m, func(t *testing.T) {
			url, stop := startServe(t, toolServeConfig(t, m))
			defer func() {
				if err := stop(); err != nil {
					t.Error(err)
				}
			}()
			model := servedModel(t, url)
			for _, s := range toolClientScripts {
				t.Run(s.script, func(t *testing.T) {
					lines := runNodeScript(t, node, toolClientsDir, s.script, url, model)
					if len(lines) != len(s.cases) {
						t.Fatalf("%d results, want %d: %s", len(lines), len(s.cases), lines)
					}
					for i, c := range s.cases {
						var r toolClientResult
						if err := json.Unmarshal(lines[i], &r); err != nil {
							t.Fatalf("%v: %s", err, lines[i])
						}
						checkToolClient(t, c, r, func(args string) bool {
							return valid(schema)(args) && valid(compileSchema(t, string(r.Parameters)))(args)
						})
					}
				})
			}
		})
	}
}

// checkToolClient checks one conversation against its case; valid tells
// whether arguments satisfy the tool's schemas.
func checkToolClient(t *testing.T, c toolClientCase, r toolClientResult, valid func(string) bool) {
	t.Helper()
	at := c.client + "/" + c.name
	if r.Client != c.client || r.Case != c.name || len(r.Problems) != 0 {
		t.Errorf("%s: got %s/%s, problems %q", at, r.Client, r.Case, r.Problems)
	}
	if len(r.ToolChoice) != 2 || !jsonEqual(r.ToolChoice[0], c.choice) || !jsonEqual(r.ToolChoice[1], `"none"`) {
		t.Errorf("%s: tool_choice sent %s, want %s then \"none\"", at, r.ToolChoice, c.choice)
	}
	if !slices.Equal(r.Stream, c.stream) {
		t.Errorf("%s: streamed %v, want %v", at, r.Stream, c.stream)
	}
	if r.Parallel == nil || *r.Parallel {
		t.Errorf("%s: parallel_tool_calls was not sent as false", at)
	}
	if !valid(r.Arguments) {
		t.Errorf("%s: arguments %q do not satisfy the schema %s", at, r.Arguments, r.Parameters)
	}
	if len(r.ToolArgs) != 1 || !jsonEqual(r.ToolArgs[0], r.Arguments) {
		t.Errorf("%s: the tool got %s, want the call's arguments %s", at, r.ToolArgs, r.Arguments)
	}
	if len(r.FinishReasons) != 2 || r.FinishReasons[0] != c.finish || (r.FinishReasons[1] != "stop" && r.FinishReasons[1] != "length") {
		t.Errorf("%s: finish reasons %q, want %q then stop or length", at, r.FinishReasons, c.finish)
	}
	if r.FinalText == "" {
		t.Errorf("%s: no final text", at)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
