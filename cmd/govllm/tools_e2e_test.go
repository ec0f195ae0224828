package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"govllm/internal/testmodels"
)

// weatherSchema is the get_weather tool's parameters.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}`

func weatherTool(t *testing.T) sdk.ChatCompletionToolUnionParam {
	var params shared.FunctionParameters
	if err := json.Unmarshal([]byte(weatherSchema), &params); err != nil {
		t.Fatal(err)
	}
	return sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: sdk.String("Current weather in a city"), Parameters: params})
}

// toolServeConfig serves model ("dummy" or "stories260K") with
// Qwen2.5's chat template (its tools block) and the hermes parser.
func toolServeConfig(t *testing.T, model string) serveConfig {
	t.Helper()
	cfg := testServeConfig()
	cfg.MaxModelLen = 2048 // Qwen2.5's tools block is long
	cfg.MaxNumBatchedTokens = 2048
	cfg.KVCacheMemory = 128 << 20
	cfg.ChatTemplate = filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen2.5-7B-Instruct.jinja")
	cfg.EnableAutoToolChoice, cfg.ToolCallParser = true, "hermes"
	if model == "stories260K" {
		cfg.Model = filepath.Join(testmodels.Dir(t, "stories260K"), "stories260K.gguf")
	}
	return cfg
}

// TestToolLoop drives a two-step weather conversation with the OpenAI Go
// SDK against govllm serve, on the random-weight model and on
// stories260K, with Qwen2.5's chat template (its tools block) and the
// hermes parser: step one with tool_choice "required" (and a named
// function, and streamed through the SDK's accumulator) must come back as
// get_weather calls whose arguments satisfy the schema — the constraint
// alone makes them valid — and step two, with the tool's result in the
// conversation and tool_choice "none", answers with content.
func TestToolLoop(t *testing.T) {
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
			client := sdk.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
			ctx := context.Background()
			msgs := []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("What is the weather in Paris?")}
			checkCalls := func(t *testing.T, calls []sdk.ChatCompletionMessageToolCallUnion) {
				t.Helper()
				if len(calls) == 0 {
					t.Fatal("no tool calls")
				}
				for _, c := range calls {
					if c.Function.Name != "get_weather" || c.ID == "" || c.Type != "function" {
						t.Fatalf("call %+v", c)
					}
					if !valid(schema)(c.Function.Arguments) {
						t.Fatalf("arguments %q do not satisfy the schema", c.Function.Arguments)
					}
				}
			}
			base := sdk.ChatCompletionNewParams{Model: "", Messages: msgs, Tools: []sdk.ChatCompletionToolUnionParam{weatherTool(t)},
				MaxCompletionTokens: sdk.Int(400), Temperature: sdk.Float(1), Seed: sdk.Int(3),
				ParallelToolCalls: sdk.Bool(false)} // one call: a random model never stops adding calls

			req := base
			req.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String("required")}
			first, err := client.Chat.Completions.New(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			ch := first.Choices[0]
			if ch.FinishReason != "tool_calls" {
				t.Fatalf("finish %q, want tool_calls: %+v", ch.FinishReason, ch.Message)
			}
			checkCalls(t, ch.Message.ToolCalls)

			named := base
			named.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &sdk.ChatCompletionNamedToolChoiceParam{
				Function: sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}}}
			nc, err := client.Chat.Completions.New(ctx, named)
			if err != nil {
				t.Fatal(err)
			}
			checkCalls(t, nc.Choices[0].Message.ToolCalls)

			// Streamed through the SDK's accumulator.
			stream := client.Chat.Completions.NewStreaming(ctx, req)
			acc := sdk.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil || len(acc.Choices) != 1 {
				t.Fatalf("stream: %v", err)
			}
			checkCalls(t, acc.Choices[0].Message.ToolCalls)

			// Step two: the tool's answer, then a plain reply.
			call := ch.Message.ToolCalls[0]
			second := base
			second.Messages = append(append(msgs, ch.Message.ToParam()), sdk.ToolMessage("18 C and cloudy", call.ID))
			second.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String("none")}
			second.MaxCompletionTokens = sdk.Int(8)
			reply, err := client.Chat.Completions.New(ctx, second)
			if err != nil {
				t.Fatal(err)
			}
			if reply.Choices[0].Message.Content == "" || len(reply.Choices[0].Message.ToolCalls) != 0 {
				t.Fatalf("second step %+v", reply.Choices[0].Message)
			}
		})
	}
}

// TestAutoToolsAndReasoning serves the random-weight model with Qwen3's
// parsers (--reasoning-parser qwen3, --tool-call-parser hermes) and forces
// Qwen3-shaped outputs with a choice constraint: the answer's think block
// must come back as reasoning_content, its <tool_call> as a tool call
// (finish_reason tool_calls), the same whether streamed (through the SDK's
// accumulator) or not; a plain answer stays content.
func TestAutoToolsAndReasoning(t *testing.T) {
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
		req := sdk.ChatCompletionNewParams{Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("Weather in Paris?")},
			Tools: []sdk.ChatCompletionToolUnionParam{weatherTool(t)}, MaxCompletionTokens: sdk.Int(200)}
		choice, _ := json.Marshal([]string{tc.output})
		opt := option.WithJSONSet("structured_outputs", json.RawMessage(`{"choice":`+string(choice)+`}`))
		check := func(t *testing.T, m sdk.ChatCompletionMessage, reasoning, finish string) {
			t.Helper()
			if reasoning != tc.reasoning || m.Content != tc.content {
				t.Fatalf("reasoning %q content %q, want %q and %q", reasoning, m.Content, tc.reasoning, tc.content)
			}
			if tc.args == "" {
				if len(m.ToolCalls) != 0 || finish != "stop" {
					t.Fatalf("calls %+v finish %q", m.ToolCalls, finish)
				}
				return
			}
			if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "get_weather" || m.ToolCalls[0].Function.Arguments != tc.args || finish != "tool_calls" {
				t.Fatalf("calls %+v finish %q", m.ToolCalls, finish)
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			r, err := client.Chat.Completions.New(ctx, req, opt)
			if err != nil {
				t.Fatal(err)
			}
			var extra struct {
				Reasoning string `json:"reasoning_content"`
			}
			json.Unmarshal([]byte(r.Choices[0].Message.RawJSON()), &extra)
			check(t, r.Choices[0].Message, extra.Reasoning, string(r.Choices[0].FinishReason))
		})
		t.Run(tc.name+"/streamed", func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctx, req, opt)
			acc := sdk.ChatCompletionAccumulator{}
			var reasoning string
			for stream.Next() {
				c := stream.Current()
				acc.AddChunk(c)
				for _, ch := range c.Choices {
					var d struct {
						Reasoning string `json:"reasoning_content"`
					}
					json.Unmarshal([]byte(ch.Delta.RawJSON()), &d)
					reasoning += d.Reasoning
				}
			}
			if err := stream.Err(); err != nil || len(acc.Choices) != 1 {
				t.Fatalf("stream: %v", err)
			}
			check(t, acc.Choices[0].Message, reasoning, string(acc.Choices[0].FinishReason))
		})
	}
}
