package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// client speaks the OpenAI streaming API of one server.
type client struct {
	http    *http.Client
	baseURL string
	apiKey  string
	headers map[string]string // sent with every request (vLLM's --header)
}

// requestResult is what one benchmark request measured.
type requestResult struct {
	Success      bool
	Err          string
	Start        time.Time     // when the request was sent
	Queue        time.Duration // from its arrival to Start: waiting for --max-concurrency
	TTFT         time.Duration // to the first chunk with content
	ITL          []time.Duration
	Latency      time.Duration
	PromptTokens int // from the server's usage
	OutputTokens int // from the server's usage
	Text         string
}

func (c *client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// errorFrom turns a non-2xx response into an error carrying the OpenAI
// error message when there is one.
func errorFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &env) == nil && env.Error.Message != "" {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, env.Error.Message)
	}
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// tokenize calls the server's POST /tokenize (vLLM's extension), with the
// tokenizer's special tokens (BOS) when special.
func (c *client) tokenize(ctx context.Context, model, text string, special bool) ([]int32, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/tokenize", map[string]any{"model": model, "prompt": text, "add_special_tokens": special})
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errorFrom(resp)
	}
	var out struct {
		Tokens []int32 `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decoding /tokenize reply: %w", err)
	}
	return out.Tokens, nil
}

// streamChunk covers both completions and chat-completions stream chunks.
type streamChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// Error is the OpenAI error envelope a server sends as an event when
	// the request fails after the stream has started.
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// send runs one streaming request and measures it. Failures are recorded
// in the result, not returned: a benchmark goes on.
func (c *client) send(ctx context.Context, cfg *Config, p *Prompt) requestResult {
	res := requestResult{Start: time.Now()}
	req, err := c.newRequest(ctx, http.MethodPost, cfg.Endpoint, requestBody(cfg, p))
	if err != nil {
		res.Err = err.Error()
		return res
	}
	if p.RequestID != "" {
		req.Header.Set("X-Request-Id", p.RequestID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		res.Err = errorFrom(resp).Error()
		return res
	}
	readStream(resp.Body, &res)
	return res
}

// requestBody is the streaming request of one prompt, as vLLM's
// benchmark sends it: no sampling parameter unless given (they come in
// cfg.ExtraBody, which is merged last).
func requestBody(cfg *Config, p *Prompt) map[string]any {
	body := map[string]any{
		"model":          cfg.Model,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if cfg.IgnoreEOS {
		body["ignore_eos"] = true
	}
	switch {
	case cfg.Endpoint == "/v1/chat/completions":
		body["messages"] = []map[string]string{{"role": "user", "content": p.Text}}
		body["max_completion_tokens"] = p.OutputLen
	case p.TokenIDs != nil:
		body["prompt"] = p.TokenIDs
		body["max_tokens"] = p.OutputLen
	default:
		body["prompt"] = p.Text
		body["max_tokens"] = p.OutputLen
	}
	for k, v := range cfg.ExtraBody {
		body[k] = v
	}
	return body
}

// readStream reads an SSE stream of completion or chat chunks to its
// "data: [DONE]", timing every content chunk from res.Start; it sets
// Success, or Err.
func readStream(body io.Reader, res *requestResult) {
	var text strings.Builder
	last := res.Start
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	done := false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		now := time.Now()
		var ch streamChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			res.Err = fmt.Sprintf("bad stream chunk %q: %v", data, err)
			return
		}
		if ch.Error != nil {
			res.Latency = time.Since(res.Start)
			res.Err = "error event in the stream: " + ch.Error.Message
			return
		}
		if ch.Usage != nil {
			res.PromptTokens = ch.Usage.PromptTokens
			res.OutputTokens = ch.Usage.CompletionTokens
		}
		content := ""
		for _, choice := range ch.Choices {
			content += choice.Text + choice.Delta.Content
		}
		if content == "" {
			continue
		}
		if text.Len() == 0 {
			res.TTFT = now.Sub(res.Start)
		} else {
			res.ITL = append(res.ITL, now.Sub(last))
		}
		last = now
		text.WriteString(content)
	}
	res.Latency = time.Since(res.Start)
	switch {
	case sc.Err() != nil:
		res.Err = sc.Err().Error()
	case !done:
		res.Err = "stream ended without data: [DONE]"
	case text.Len() == 0:
		// No content at all (or every token decoded to empty text): there is
		// no TTFT to measure, so the request fails, as in vLLM's benchmark.
		res.Err = "no content chunk in the stream"
	default:
		res.Text = text.String()
		res.Success = true
	}
}
