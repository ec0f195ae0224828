package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// newSDKClient is the official OpenAI Go client pointed at baseURL.
func newSDKClient(baseURL, key string) sdk.Client {
	return sdk.NewClient(option.WithBaseURL(baseURL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// TestOpenAISDK drives the server with the official OpenAI Go SDK:
// completions and chat, plain and streaming, and an error.
func TestOpenAISDK(t *testing.T) {
	f := newFake()
	srv := newTestServer(t, f, func(c *Config) { c.APIKey = "k" })
	client := newSDKClient(srv.URL, "k")
	ctx := context.Background()
	runSDKChecks(t, ctx, client, model, f.tok.Decode([]int32{258, 259, 260}, false))

	var apiErr *sdk.Error
	_, err := client.Completions.New(ctx, sdk.CompletionNewParams{
		Model: "no-such-model", Prompt: sdk.CompletionNewParamsPromptUnion{OfString: sdk.String("x")},
	})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown model: %v", err)
	}
	bad := newSDKClient(srv.URL, "wrong")
	_, err = bad.Models.List(ctx)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v", err)
	}
}

// runSDKChecks runs the SDK scenarios; want3 is the text of a 3-token
// greedy completion when known ("" to skip the text check).
func runSDKChecks(t *testing.T, ctx context.Context, client sdk.Client, model, want3 string) {
	t.Helper()
	prompt := sdk.CompletionNewParamsPromptUnion{OfString: sdk.String("Once upon a time")}
	c, err := client.Completions.New(ctx, sdk.CompletionNewParams{Model: sdk.CompletionNewParamsModel(model), Prompt: prompt, MaxTokens: sdk.Int(3), Temperature: sdk.Float(0)})
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	if len(c.Choices) != 1 || c.Usage.CompletionTokens != 3 || want3 != "" && c.Choices[0].Text != want3 {
		t.Fatalf("completion %+v", c)
	}
	text := c.Choices[0].Text
	if c.SystemFingerprint == "" || c.Choices[0].JSON.ExtraFields["stop_reason"].Raw() != "null" {
		t.Fatalf("completion without system_fingerprint or a null stop_reason: %s", c.RawJSON())
	}

	stream := client.Completions.NewStreaming(ctx, sdk.CompletionNewParams{Model: sdk.CompletionNewParamsModel(model), Prompt: prompt, MaxTokens: sdk.Int(3), Temperature: sdk.Float(0),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}})
	var streamed string
	var usage int64
	for stream.Next() {
		ch := stream.Current()
		for _, choice := range ch.Choices {
			streamed += choice.Text
		}
		if ch.Usage.TotalTokens > 0 {
			usage = ch.Usage.CompletionTokens
		}
	}
	if err := stream.Err(); err != nil || streamed != text || usage != 3 {
		t.Fatalf("streamed completion %q (usage %d), want %q: %v", streamed, usage, text, err)
	}

	msgs := []sdk.ChatCompletionMessageParamUnion{sdk.SystemMessage("You are terse."), sdk.UserMessage("Hi")}
	cc, err := client.Chat.Completions.New(ctx, sdk.ChatCompletionNewParams{Model: model, Messages: msgs, MaxCompletionTokens: sdk.Int(3), Temperature: sdk.Float(0)})
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if len(cc.Choices) != 1 || cc.Choices[0].Message.Role != "assistant" || cc.Usage.CompletionTokens != 3 {
		t.Fatalf("chat %+v", cc)
	}
	if cc.SystemFingerprint == "" || cc.Choices[0].JSON.ExtraFields["stop_reason"].Raw() != "null" {
		t.Fatalf("chat without system_fingerprint or a null stop_reason: %s", cc.RawJSON())
	}
	cs := client.Chat.Completions.NewStreaming(ctx, sdk.ChatCompletionNewParams{Model: model, Messages: msgs, MaxCompletionTokens: sdk.Int(3), Temperature: sdk.Float(0),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}})
	acc := sdk.ChatCompletionAccumulator{}
	for cs.Next() {
		acc.AddChunk(cs.Current())
	}
	if err := cs.Err(); err != nil || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != cc.Choices[0].Message.Content || acc.Usage.CompletionTokens != 3 {
		t.Fatalf("streamed chat %+v, want %q: %v", acc.ChatCompletion, cc.Choices[0].Message.Content, err)
	}
	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) == 0 || models.Data[0].ID != model {
		t.Fatalf("models %+v: %v", models, err)
	}
}
