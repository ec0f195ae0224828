package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"govllm/internal/testmodels"
)

// responsesServer serves model ("dummy" or "stories260K") with Qwen2.5's
// chat template (its tools block) and the hermes parser, and returns an
// SDK client for it, its URL and its stop function.
func responsesServer(t *testing.T, model string) (sdk.Client, string, func()) {
	t.Helper()
	cfg := testServeConfig()
	cfg.MaxModelLen, cfg.MaxNumBatchedTokens, cfg.KVCacheMemory = 2048, 2048, 128<<20
	cfg.ChatTemplate = filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen2.5-7B-Instruct.jinja")
	cfg.EnableAutoToolChoice, cfg.ToolCallParser = true, "hermes"
	if model == "stories260K" {
		cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	}
	url, stop := startServe(t, cfg)
	client := sdk.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	return client, url, func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}
}

func responsesWeatherTool(t *testing.T) responses.ToolUnionParam {
	var params map[string]any
	if err := json.Unmarshal([]byte(weatherSchema), &params); err != nil {
		t.Fatal(err)
	}
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: params,
		Description: sdk.String("Current weather in a city")}}
}

// checkWeatherCall asserts that out is one completed get_weather
// function_call item whose arguments are valid, and returns it.
func checkWeatherCall(t *testing.T, valid func(string) bool, out []responses.ResponseOutputItemUnion) responses.ResponseOutputItemUnion {
	t.Helper()
	if len(out) != 1 || out[0].Type != "function_call" {
		t.Fatalf("output %+v, want one function_call item", out)
	}
	c := out[0]
	if c.Name != "get_weather" || c.CallID == "" || !strings.HasPrefix(c.ID, "fc_") || c.Status != "completed" {
		t.Fatalf("call %+v", c)
	}
	if !valid(c.Arguments.OfString) {
		t.Fatalf("arguments %q do not satisfy the schema", c.Arguments.OfString)
	}
	return c
}

// TestResponsesToolLoop drives a two-step weather conversation through
// /v1/responses with the OpenAI Go SDK, on the random-weight model and on
// stories260K: step one with tool_choice "required" must come back as a
// function_call output item (call_id, name, arguments satisfying the
// schema, status completed), also streamed through the SDK's event stream;
// step two sends the function_call_output item with previous_response_id
// and tool_choice "none" and gets a text message; the stored response is
// retrieved with GET.
func TestResponsesToolLoop(t *testing.T) {
	noLeaks(t)
	schema := compileSchema(t, weatherSchema)
	for _, m := range []string{"dummy", "stories260K"} {
		t.Run(m, func(t *testing.T) {
			client, _, stop := responsesServer(t, m)
			defer stop()
			ctx := context.Background()
			req := responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("What is the weather in Paris?")},
				Tools: []responses.ToolUnionParam{responsesWeatherTool(t)}, MaxOutputTokens: sdk.Int(400), Temperature: sdk.Float(1),
				ParallelToolCalls: sdk.Bool(false),
				ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: sdk.Opt(responses.ToolChoiceOptionsRequired)}}
			checkCall := func(t *testing.T, out []responses.ResponseOutputItemUnion) responses.ResponseOutputItemUnion {
				t.Helper()
				return checkWeatherCall(t, valid(schema), out)
			}
			first, err := client.Responses.New(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if first.Status != "completed" || first.Object != "response" || !strings.HasPrefix(first.ID, "resp_") {
				t.Fatalf("response %s %s %s", first.ID, first.Object, first.Status)
			}
			call := checkCall(t, first.Output)

			stream := client.Responses.NewStreaming(ctx, req)
			var done responses.Response
			var types []string
			var args strings.Builder
			for stream.Next() {
				ev := stream.Current()
				if len(types) == 0 || types[len(types)-1] != ev.Type {
					types = append(types, ev.Type)
				}
				switch ev.Type {
				case "response.function_call_arguments.delta":
					args.WriteString(ev.Delta)
				case "response.completed":
					done = ev.Response
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(types, responsesCallEvents) {
				t.Fatalf("events %v, want %v", types, responsesCallEvents)
			}
			if c := checkCall(t, done.Output); c.Arguments.OfString != args.String() {
				t.Fatalf("arguments %q, deltas %q", c.Arguments.OfString, args.String())
			}

			out := responses.ResponseInputItemParamOfFunctionCallOutput("18 C and cloudy")
			out.OfFunctionCallOutput.CallID = sdk.String(call.CallID)
			second, err := client.Responses.New(ctx, responses.ResponseNewParams{PreviousResponseID: sdk.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}},
				Tools: req.Tools, MaxOutputTokens: sdk.Int(8),
				ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: sdk.Opt(responses.ToolChoiceOptionsNone)}})
			if err != nil {
				t.Fatal(err)
			}
			if len(second.Output) != 1 || second.Output[0].Type != "message" || second.OutputText() == "" || second.PreviousResponseID != first.ID {
				t.Fatalf("second step: %s", second.RawJSON())
			}
			if second.Usage.InputTokens <= first.Usage.InputTokens {
				t.Fatalf("the second prompt (%d tokens) must hold the first (%d tokens)", second.Usage.InputTokens, first.Usage.InputTokens)
			}
			got, err := client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
			if err != nil || got.ID != first.ID || got.Output[0].CallID != call.CallID {
				t.Fatalf("GET: %v %+v", err, got)
			}
		})
	}
}

// responsesCallEvents is OpenAI's event order for a response of one
// function call (repeated deltas counted once).
var responsesCallEvents = []string{"response.created", "response.in_progress", "response.output_item.added",
	"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}

// TestResponsesStructured asks for a json_schema text.format: the output
// text must satisfy the schema, and the format is echoed.
func TestResponsesStructured(t *testing.T) {
	noLeaks(t)
	client, _, stop := responsesServer(t, "dummy")
	defer stop()
	var schema map[string]any
	json.Unmarshal([]byte(weatherSchema), &schema)
	r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("Weather as JSON")}, MaxOutputTokens: sdk.Int(300),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: schema}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "completed" || !valid(compileSchema(t, weatherSchema))(r.OutputText()) {
		t.Fatalf("status %s, text %q does not satisfy the schema", r.Status, r.OutputText())
	}
	if r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "weather" {
		t.Fatalf("text echo %s", r.Text.RawJSON())
	}
}

// responsesTextEvents is OpenAI's event order for a response of one text
// message.
var responsesTextEvents = []string{"response.created", "response.in_progress", "response.output_item.added",
	"response.content_part.added", "response.output_text.delta", "response.output_text.done",
	"response.content_part.done", "response.output_item.done"}

// TestResponsesStreamAndIncomplete streams a text answer through the
// SDK: the events come in OpenAI's order with consecutive sequence
// numbers, the deltas concatenate to the final text, and max_output_tokens
// makes the response incomplete (incomplete_details.reason
// max_output_tokens), streamed (response.incomplete) or not.
func TestResponsesStreamAndIncomplete(t *testing.T) {
	noLeaks(t)
	client, _, stop := responsesServer(t, "stories260K")
	defer stop()
	ctx := context.Background()
	req := responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("Once upon a time")},
		Instructions: sdk.String("Tell a story."), MaxOutputTokens: sdk.Int(12), Temperature: sdk.Float(0)}
	stream := client.Responses.NewStreaming(ctx, req)
	var types []string
	var deltas strings.Builder
	var final responses.Response
	for i := int64(0); stream.Next(); i++ {
		ev := stream.Current()
		if ev.SequenceNumber != i {
			t.Fatalf("event %d (%s) has sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
		if len(types) == 0 || types[len(types)-1] != ev.Type || ev.Type != "response.output_text.delta" {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.incomplete":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(responsesTextEvents), "response.incomplete")
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if final.Status != "incomplete" || final.IncompleteDetails.Reason != "max_output_tokens" || final.Usage.OutputTokens != 12 {
		t.Fatalf("final %s", final.RawJSON())
	}
	if deltas.String() == "" || final.OutputText() != deltas.String() || final.Instructions.OfString != "Tell a story." {
		t.Fatalf("deltas %q, final text %q", deltas.String(), final.OutputText())
	}
	r, err := client.Responses.New(ctx, req) // greedy: the same text
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" || r.OutputText() != final.OutputText() {
		t.Fatalf("non-streaming %s", r.RawJSON())
	}
}

// TestResponsesErrors checks the refusals: an unknown previous_response_id
// is a 404 (vLLM's), store false is not stored, and unsupported fields
// are 400s naming them; /v1/responses requests count in the HTTP and
// engine metrics like chat's.
func TestResponsesErrors(t *testing.T) {
	noLeaks(t)
	client, url, stop := responsesServer(t, "dummy")
	defer stop()
	ctx := context.Background()
	sc := &scraper{url: url, hc: http.DefaultClient}
	before := sc.scrape(t)
	in := responses.ResponseNewParamsInputUnion{OfString: sdk.String("Hi")}
	_, err := client.Responses.New(ctx, responses.ResponseNewParams{Input: in, PreviousResponseID: sdk.String("resp_unknown")})
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Param != "previous_response_id" {
		t.Fatalf("unknown previous_response_id: %v", err)
	}
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Input: in, Store: sdk.Bool(false), MaxOutputTokens: sdk.Int(2)})
	if err != nil || !strings.Contains(r.RawJSON(), `"store":false`) {
		t.Fatalf("store false: %v %s", err, r.RawJSON())
	}
	if _, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a response not stored: %v", err)
	}
	for _, tc := range []struct{ body, param string }{
		{`{"input":"x","background":true}`, "background"},
		{`{"input":"x","include":["message.output_text.logprobs"]}`, "include"},
		{`{"input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{`{"input":[{"type":"reasoning","summary":[]}]}`, "input[0].type"},
		{`{"input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name"},
		{`{"input":"x","reasoning":{"summary":"auto"}}`, "reasoning.summary"},
		{`{"input":"x","conversation":"conv_1"}`, "conversation"},
	} {
		resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Error struct{ Param string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || env.Error.Param != tc.param {
			t.Errorf("%s: status %d param %q, want 400 naming %s", tc.body, resp.StatusCode, env.Error.Param, tc.param)
		}
	}
	sc.await(t, "metrics", 10*time.Second, func(s *scrape) []check {
		d := delta{before, s}
		return []check{
			eq(`http_requests_total{handler="/v1/responses",status="2xx"}`, d.c("http_requests_total", "handler", "/v1/responses", "status", "2xx"), 1),
			eq(`http_requests_total{handler="/v1/responses",status="4xx"}`, d.c("http_requests_total", "handler", "/v1/responses", "status", "4xx"), 8),
			eq("vllm:request_success_total", d.c("vllm:request_success_total"), 1),
			eq("vllm:generation_tokens_total", d.c("vllm:generation_tokens_total"), 2),
		}
	})
}

// TestResponsesReasoningAndAutoTools serves the random-weight model with
// Qwen3's parsers (--reasoning-parser qwen3, --tool-call-parser hermes)
// and forces Qwen3-shaped outputs with a structured_outputs choice (the
// same outputs and expected values as TestAutoToolsAndReasoning): the
// think block must come back as a reasoning item (reasoning_text
// content), the <tool_call> as a function_call item, the rest as a
// message, in that order, streamed (reasoning_text events) or not.
func TestResponsesReasoningAndAutoTools(t *testing.T) {
	noLeaks(t)
	cfg := testServeConfig()
	cfg.MaxModelLen, cfg.MaxNumBatchedTokens, cfg.KVCacheMemory = 2048, 2048, 128<<20
	cfg.ChatTemplate = filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen3-0.6B.jinja")
	cfg.EnableAutoToolChoice, cfg.ToolCallParser, cfg.ReasoningParser = true, "hermes", "qwen3"
	url, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	client := sdk.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	ctx := context.Background()
	const call = "<think>\nThe user wants Paris.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"
	const plain = "<think>\nNo tool needed.\n</think>\n\nIt is sunny."
	for _, tc := range []struct {
		name, output, reasoning, content, args string
	}{
		{"tool call", call, "\nThe user wants Paris.\n", "", `{"city": "Paris", "unit": "celsius"}`},
		{"plain answer", plain, "\nNo tool needed.\n", "\n\nIt is sunny.", ""},
	} {
		req := responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("Weather in Paris?")},
			Tools: []responses.ToolUnionParam{responsesWeatherTool(t)}, MaxOutputTokens: sdk.Int(200)}
		choice, _ := json.Marshal([]string{tc.output})
		opt := option.WithJSONSet("structured_outputs", json.RawMessage(`{"choice":`+string(choice)+`}`))
		check := func(t *testing.T, out []responses.ResponseOutputItemUnion) {
			t.Helper()
			checkItems(t, out, tc.reasoning, tc.content, tc.args)
		}
		t.Run(tc.name, func(t *testing.T) {
			r, err := client.Responses.New(ctx, req, opt)
			if err != nil {
				t.Fatal(err)
			}
			check(t, r.Output)
			if r.Usage.OutputTokensDetails.ReasoningTokens == 0 {
				t.Fatalf("usage %s: no reasoning tokens", r.Usage.RawJSON())
			}
		})
		t.Run(tc.name+"/streamed", func(t *testing.T) {
			stream := client.Responses.NewStreaming(ctx, req, opt)
			var final responses.Response
			var reasoning strings.Builder
			for stream.Next() {
				switch ev := stream.Current(); ev.Type {
				case "response.reasoning_text.delta":
					reasoning.WriteString(ev.Delta)
				case "response.completed":
					final = ev.Response
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			check(t, final.Output)
			if reasoning.String() != tc.reasoning {
				t.Fatalf("reasoning deltas %q, want %q", reasoning.String(), tc.reasoning)
			}
		})
	}
}

// checkItems asserts Qwen3-shaped output items: reasoning, then a message
// (content) or a get_weather call (args).
func checkItems(t *testing.T, out []responses.ResponseOutputItemUnion, wantReasoning, wantContent, wantArgs string) {
	t.Helper()
	var reasoning, content, args string
	var types []string
	for _, it := range out {
		types = append(types, it.Type)
		switch it.Type {
		case "reasoning":
			reasoning = it.Content[0].Text
		case "message":
			content = it.Content[0].Text
		case "function_call":
			args = it.Arguments.OfString
			if it.Name != "get_weather" || it.CallID == "" {
				t.Fatalf("call %+v", it)
			}
		}
	}
	want := []string{"reasoning", "message"}
	if wantArgs != "" {
		want = []string{"reasoning", "function_call"}
	}
	if !slices.Equal(types, want) || reasoning != wantReasoning || content != wantContent || args != wantArgs {
		t.Fatalf("items %v reasoning %q content %q arguments %q, want %v %q %q %q", types, reasoning, content, args, want, wantReasoning, wantContent, wantArgs)
	}
}
