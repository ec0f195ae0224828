package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"govllm/internal/core"
	"govllm/internal/testmodels"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The page at / in a real headless Chromium (Debian's chromium package):
//
//	go test ./cmd/govllm -run TestWebUI -v
//
// saves its screenshots in a temporary directory; the README's are made by
//
//	GOVLLM_UI_SCREENSHOTS=docs/images go test ./cmd/govllm -run TestWebUI
//
// (the path is relative to the repository root).

// chromium is the browser's path; the test is skipped, saying why, when
// none is installed.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPING the browser test: no chromium binary on $PATH (apt-get install chromium)")
	return ""
}

// screenshotDir is $GOVLLM_UI_SCREENSHOTS (relative to the repository
// root), else a temporary directory.
func screenshotDir(t *testing.T) string {
	d := os.Getenv("GOVLLM_UI_SCREENSHOTS")
	if d == "" {
		return t.TempDir()
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join("..", "..", d)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// browser is one headless Chromium tab and the page errors it reported.
type browser struct {
	ctx context.Context
	dir string
	mu  sync.Mutex
	// errs are console errors, uncaught exceptions and failed loads; allow
	// says which failed loads the test expects (none by default).
	errs  []string
	allow func(e *cdplog.Entry) bool
}

// newBrowser starts Chromium with a 1280×800 window; at cleanup the test
// fails on any error the page reported.
func newBrowser(t *testing.T) *browser {
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &browser{ctx: ctx, dir: screenshotDir(t), allow: func(*cdplog.Entry) bool { return false }}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errs {
			t.Errorf("the page reported an error: %s", e)
		}
	})
	if err := chromedp.Listen(ctx, b.onEvent); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	b.do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{})
		return err
	}), chromedp.EmulateViewport(1280, 800))
	return b
}

func (b *browser) onEvent(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			msg = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
		}
	case *runtime.EventExceptionThrown:
		msg = (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error()
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError && !b.allow(ev.Entry) {
			msg = fmt.Sprintf("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	}
	if msg != "" {
		b.mu.Lock()
		b.errs = append(b.errs, msg)
		b.mu.Unlock()
	}
}

func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// wait polls a JavaScript predicate until it holds.
func (b *browser) wait(t *testing.T, what, predicate string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		banner, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('#error').textContent`))
		t.Fatalf("waiting for %s (%s): %v; the page's error banner: %q", what, predicate, err, banner)
	}
}

// eval evaluates a JavaScript expression into v.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shot saves a screenshot of the viewport as name.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", p, len(png))
}

// setField types value into an input, replacing what it held.
func (b *browser) setField(t *testing.T, id, value string) {
	t.Helper()
	b.do(t, chromedp.SetValue(chromedp.CSS("#"+id), ""), chromedp.SendKeys(chromedp.CSS("#"+id), value))
}

// lastReply is the JavaScript of the last assistant message.
const lastReply = `document.querySelector('#transcript li.assistant:last-of-type')`

// send types a message with the given max tokens and presses Enter.
func (b *browser) send(t *testing.T, msg string, maxTokens int) {
	t.Helper()
	b.setField(t, "max_tokens", fmt.Sprint(maxTokens))
	b.do(t, chromedp.SendKeys(chromedp.CSS("#prompt"), msg), chromedp.KeyEvent(kb.Enter))
}

func pacedServe(t *testing.T, cfg serveConfig) (string, *pacedExecutor) {
	slow := &pacedExecutor{}
	cfg.wrapExecutor = func(e core.Executor) core.Executor { slow.Executor = e; return slow }
	url, stop := startServe(t, cfg)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve returned %v", err)
		}
	})
	return url, slow
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestWebUI drives the page against a real serve on the dummy model: a
// chat reply streams in with its usage and timings, Stop aborts a second
// one mid-reply (an abort in /metrics), and the dashboard's counters move
// and agree with a /metrics scrape; at 1280×800 and at 390 px wide, with
// no console error, every control named, and the tabs keyboard-driven.
func TestWebUI(t *testing.T) {
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	cfg.MaxModelLen, cfg.MaxNumBatchedTokens = 512, 512
	url, slow := pacedServe(t, cfg)
	b := newBrowser(t)
	b.do(t, chromedp.Navigate(url+"/"))
	b.wait(t, "the model list", `document.querySelector('#model').value === 'dummy'`, 20*time.Second)
	b.wait(t, "the version", `/^version /.test(document.querySelector('#version').textContent)`, 10*time.Second)
	b.wait(t, "the dashboard's first scrape", `document.querySelector('#tiles [data-key="requests"] .value')?.dataset.value === '0'`, 10*time.Second)
	checkAccessibleNames(t, b)

	b.setField(t, "seed", "7")
	b.send(t, "Hello there", 12)
	b.wait(t, "the first reply", lastReply+`?.dataset.state === 'done'`, 30*time.Second)
	stats := eval[string](t, b, lastReply+`.querySelector('.stats').textContent`)
	for _, want := range []string{" prompt + 12 completion tokens", "TTFT ", " tok/s", "finish: length"} {
		if !strings.Contains(stats, want) {
			t.Errorf("reply stats %q lack %q", stats, want)
		}
	}
	b.shot(t, "webui-chat")

	stopMidReply(t, b, slow)
	sc := &scraper{url: url, hc: http.DefaultClient}
	s := sc.await(t, "after Stop", 20*time.Second, func(s *scrape) []check {
		return []check{
			eq(`request_success_total{finished_reason="abort"}`, s.sum("vllm:request_success_total", "finished_reason", "abort"), 1),
			eq(`request_success_total{finished_reason="length"}`, s.sum("vllm:request_success_total", "finished_reason", "length"), 1),
			eq("num_requests_running", s.sum("vllm:num_requests_running"), 0),
		}
	})
	dashboardAgrees(t, b, s)
	b.shot(t, "webui-dashboard")
	phoneWidth(t, b)
}

// stopMidReply sends a long request, sees its tokens stream in, and
// presses Stop while it streams.
func stopMidReply(t *testing.T, b *browser, slow *pacedExecutor) {
	slow.pace.Store(int64(40 * time.Millisecond)) // 200 tokens take 8 s: Stop lands mid-reply
	defer slow.pace.Store(0)
	b.send(t, "Tell me a long story", 200)
	b.wait(t, "the first tokens", lastReply+`?.dataset.state === 'streaming' && `+lastReply+`.querySelector('.content').textContent.length > 0`, 20*time.Second)
	n := eval[int](t, b, lastReply+`.querySelector('.content').textContent.length`)
	b.wait(t, "more tokens", fmt.Sprintf(`%s.querySelector('.content').textContent.length > %d`, lastReply, n), 20*time.Second)
	if st := eval[string](t, b, lastReply+`.dataset.state`); st != "streaming" {
		t.Fatalf("the reply is %q before Stop, want streaming", st)
	}
	b.do(t, chromedp.Click(chromedp.CSS("#stop")))
	b.wait(t, "the stopped reply", lastReply+`.dataset.state === 'stopped'`, 10*time.Second)
	if stats := eval[string](t, b, lastReply+`.querySelector('.stats').textContent`); !strings.Contains(stats, "stopped") {
		t.Errorf("stopped reply stats %q", stats)
	}
}

// dashboardAgrees opens the dashboard with the keyboard and waits until
// its counters equal the scrape's (it polls every second).
func dashboardAgrees(t *testing.T, b *browser, s *scrape) {
	b.do(t, chromedp.Focus(chromedp.CSS("#tab-chat")), chromedp.KeyEvent(kb.ArrowRight))
	if sel := eval[string](t, b, `document.activeElement.id + ' ' + document.querySelector('#tab-dashboard').getAttribute('aria-selected') + ' ' + document.querySelector('#view-chat').hidden`); sel != "tab-dashboard true true" {
		t.Fatalf("after ArrowRight on the Chat tab: focus, selected, chat hidden = %q", sel)
	}
	want := map[string]float64{
		"requests":          s.sum("vllm:request_success_total"),
		"prompt-tokens":     s.sum("vllm:prompt_tokens_total"),
		"generation-tokens": s.sum("vllm:generation_tokens_total"),
		"preemptions":       s.sum("vllm:num_preemptions_total"),
		"running":           0,
	}
	if want["requests"] != 2 || want["generation-tokens"] <= 12 || want["prompt-tokens"] == 0 {
		t.Fatalf("scrape: %v, want 2 requests and more than 12 generated tokens", want)
	}
	var conds []string
	for k, v := range want {
		conds = append(conds, fmt.Sprintf(`document.querySelector('#tiles [data-key="%s"] .value')?.dataset.value === '%v'`, k, v))
	}
	conds = append(conds, `document.querySelector('#reasons tr[data-reason="abort"] td')?.textContent === '1'`,
		`document.querySelector('#reasons tr[data-reason="length"] td')?.textContent === '1'`)
	pred := strings.Join(conds, " && ")
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		got := eval[string](t, b, `Array.from(document.querySelectorAll('#tiles .tile, #reasons tr')).map(e => e.textContent).join(' | ')`)
		t.Fatalf("the dashboard does not agree with /metrics %v: %s (%v)", want, got, err)
	}
	latencyAgrees(t, b, s)
}

// latencyAgrees checks the latency table against the scrape: the page's
// window starts at its first scrape, taken before any request, so each
// mean (rate(_sum) / rate(_count)) is the histogram's _sum / _count, and
// the percentiles rise with q inside the histogram's range.
func latencyAgrees(t *testing.T, b *browser, s *scrape) {
	rows := eval[[][]string](t, b, `Array.from(document.querySelectorAll('#latency tbody tr')).map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.dataset.value))`)
	names := []string{"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds"}
	if len(rows) != len(names) {
		t.Fatalf("latency rows %v, want %d", rows, len(names))
	}
	for i, name := range names {
		count, sum := s.hist(name)
		var v [4]float64
		for j := range v {
			if _, err := fmt.Sscan(rows[i][j], &v[j]); err != nil {
				t.Fatalf("%s column %d: %q", name, j, rows[i][j])
			}
		}
		if count == 0 || math.Abs(v[3]-sum/count) > 1e-9*sum/count {
			t.Errorf("%s: the page's mean %v, the scrape's _sum/_count %v/%v", name, v[3], sum, count)
		}
		if !(0 < v[0] && v[0] <= v[1] && v[1] <= v[2]) {
			t.Errorf("%s: p50, p90, p99 = %v, want 0 < p50 ≤ p90 ≤ p99", name, v[:3])
		}
	}
}

// phoneWidth shows both views 390 px wide: nothing may overflow sideways.
func phoneWidth(t *testing.T, b *browser) {
	b.do(t, chromedp.EmulateViewport(390, 844))
	for _, view := range []string{"dashboard", "chat"} {
		b.do(t, chromedp.Click(chromedp.CSS("#tab-"+view)))
		if w := eval[int](t, b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s view at 390 px: the page is %d px wide", view, w)
		}
		b.shot(t, "webui-"+view+"-phone")
	}
}

// checkAccessibleNames fails on a control without a name: a label, an
// aria-label or (buttons, summaries) text.
func checkAccessibleNames(t *testing.T, b *browser) {
	unnamed := eval[[]string](t, b, `Array.from(document.querySelectorAll('input, select, textarea, button, [role="tab"]'))
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
		.map(e => e.id || e.outerHTML)`)
	if len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %v", unnamed)
	}
}

// TestWebUIAPIKey: with --api-key the page itself is served without a key,
// asks for one when /v1 answers 401 (again after a wrong one), and sends
// it as a bearer token.
func TestWebUIAPIKey(t *testing.T) {
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	cfg.APIKey = []string{"s3cret"}
	url, _ := pacedServe(t, cfg)
	if code, body := httpGet(t, url+"/"); code != 200 || !strings.Contains(body, "<title>govllm</title>") {
		t.Fatalf("GET / without a key: %d", code)
	}
	if code, _ := httpGet(t, url+"/v1/models"); code != 401 {
		t.Fatalf("GET /v1/models without a key: %d, want 401", code)
	}
	b := newBrowser(t)
	// The refused /v1/models requests are the only failed loads expected.
	b.allow = func(e *cdplog.Entry) bool {
		return e.Source == cdplog.EntrySourceNetwork && e.URL == url+"/v1/models" && strings.Contains(e.Text, "401")
	}
	b.do(t, chromedp.Navigate(url+"/"))
	b.wait(t, "the key form", `document.querySelector('#key-form').dataset.asked === '1' && !document.querySelector('#key-form').hidden`, 20*time.Second)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#api-key"), "wrong"), chromedp.KeyEvent(kb.Enter))
	b.wait(t, "the key form again", `document.querySelector('#key-form').dataset.asked === '2' && !document.querySelector('#key-form').hidden`, 20*time.Second)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#api-key"), "s3cret"), chromedp.KeyEvent(kb.Enter))
	b.wait(t, "the model list", `document.querySelector('#model').value === 'dummy' && document.querySelector('#key-form').hidden`, 20*time.Second)
	b.send(t, "Hello", 4)
	b.wait(t, "the reply", lastReply+`?.dataset.state === 'done'`, 30*time.Second)
	if stats := eval[string](t, b, lastReply+`.querySelector('.stats').textContent`); !strings.Contains(stats, " prompt + 4 completion tokens") {
		t.Errorf("reply stats %q", stats)
	}
}

// TestServeDisableUI: the page is at / and /ui/ unless --disable-ui, which
// leaves them 404 and the API as it was.
func TestServeDisableUI(t *testing.T) {
	for _, disable := range []bool{false, true} {
		cfg := testServeConfig()
		cfg.DisableUI = disable
		url, _ := pacedServe(t, cfg)
		want := map[bool]int{false: 200, true: 404}[disable]
		for _, path := range []string{"/", "/ui/app.js", "/ui/prom.js"} {
			if code, _ := httpGet(t, url+path); code != want {
				t.Errorf("--disable-ui=%v: GET %s = %d, want %d", disable, path, code, want)
			}
		}
		for path, code := range map[string]int{"/v1/models": 200, "/ui/": 404, "/nope": 404} {
			if got, _ := httpGet(t, url+path); got != code {
				t.Errorf("--disable-ui=%v: GET %s = %d, want %d", disable, path, got, code)
			}
		}
	}
	cfg, err := parseServeArgs([]string{"--disable-ui"}, io.Discard)
	if err != nil || !cfg.DisableUI {
		t.Errorf("parseServeArgs(--disable-ui) = %v, %v", cfg.DisableUI, err)
	}
}

// TestWebUIToolCall: with a tool and tool_choice "required" the page
// shows the streamed call (the constraint makes its arguments valid for
// the schema even on random weights), and the reply's finish reason.
func TestWebUIToolCall(t *testing.T) {
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	cfg.MaxModelLen, cfg.MaxNumBatchedTokens = 1024, 1024
	url, _ := pacedServe(t, cfg)
	b := newBrowser(t)
	b.do(t, chromedp.Navigate(url+"/"))
	b.wait(t, "the model list", `document.querySelector('#model').value === 'dummy'`, 20*time.Second)
	tools := `[{"type":"function","function":{"name":"get_weather","description":"Current weather in a city","parameters":` + weatherSchema + `}}]`
	b.do(t, chromedp.Click(chromedp.CSS("#settings summary")), chromedp.SetValue(chromedp.CSS("#tools"), tools),
		chromedp.SetValue(chromedp.CSS("#tool_choice"), "required"), chromedp.SetValue(chromedp.CSS("#parallel_tool_calls"), "false"))
	b.setField(t, "seed", "3")
	b.send(t, "What is the weather in Paris?", 400)
	b.wait(t, "the reply", lastReply+`?.dataset.state === 'done'`, 60*time.Second)
	if stats := eval[string](t, b, lastReply+`.querySelector('.stats').textContent`); !strings.HasSuffix(stats, "finish: tool_calls") {
		t.Errorf("reply stats %q, want finish: tool_calls", stats)
	}
	shown := eval[string](t, b, lastReply+`.querySelector('.tool-calls').hidden ? '' : `+lastReply+`.querySelector('.tool-calls').textContent`)
	var calls []struct {
		ID, Type string
		Function struct{ Name, Arguments string }
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(shown, "tool calls: ")), &calls); err != nil || len(calls) != 1 {
		t.Fatalf("tool calls shown %q: %v", shown, err)
	}
	c := calls[0]
	if c.ID == "" || c.Type != "function" || c.Function.Name != "get_weather" || !valid(compileSchema(t, weatherSchema))(c.Function.Arguments) {
		t.Errorf("tool call shown %+v, want one get_weather call whose arguments satisfy the schema", c)
	}
}

// TestWebUIReasoning: with --reasoning-parser qwen3 the page shows
// reasoning_content apart from the content. The output is forced with
// vLLM's structured_outputs choice, sent through the page's field of
// more request fields.
func TestWebUIReasoning(t *testing.T) {
	cfg := testServeConfig()
	cfg.ServedModelNames = []string{"dummy"}
	cfg.MaxModelLen, cfg.MaxNumBatchedTokens, cfg.KVCacheMemory = 2048, 2048, 128<<20
	cfg.ChatTemplate = filepath.Join(testmodels.Shared(t, "templates"), "Qwen-Qwen3-0.6B.jinja")
	cfg.ReasoningParser = "qwen3"
	url, _ := pacedServe(t, cfg)
	b := newBrowser(t)
	b.do(t, chromedp.Navigate(url+"/"))
	b.wait(t, "the model list", `document.querySelector('#model').value === 'dummy'`, 20*time.Second)
	extra := `{"structured_outputs": {"choice": ["<think>\nThe user wants Paris.\n</think>\n\nIt is sunny."]}}`
	b.do(t, chromedp.Click(chromedp.CSS("#settings summary")), chromedp.SetValue(chromedp.CSS("#extra"), extra))
	b.send(t, "Weather in Paris?", 64)
	b.wait(t, "the reply", lastReply+`?.dataset.state === 'done'`, 60*time.Second)
	got := eval[[]string](t, b, `[`+lastReply+`.querySelector('.reasoning').hidden ? 'hidden' : 'shown', `+
		lastReply+`.querySelector('.reasoning pre').textContent, `+lastReply+`.querySelector('.content').textContent]`)
	if got[0] != "shown" || strings.TrimSpace(got[1]) != "The user wants Paris." || strings.TrimSpace(got[2]) != "It is sunny." {
		t.Errorf("reasoning %s %q, content %q; want reasoning \"The user wants Paris.\" shown apart from the content \"It is sunny.\"", got[0], got[1], got[2])
	}
}
