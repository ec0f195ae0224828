// Package webui is the page served at GET / (and its files under /ui/):
// a chat playground over /v1/chat/completions and a live dashboard of
// /metrics, plain HTML, CSS and JavaScript embedded in the binary (no
// build step, no third-party code).
//
// The page talks to the server only through its public endpoints:
// /v1/models, /v1/chat/completions (SSE, stopped with an AbortController,
// which the server counts as finished_reason="abort"), /metrics (polled
// every second and parsed in the page) and /version. With --api-key the
// page asks for the key when /v1 answers 401 and sends it as a bearer
// token; the page itself needs none.
//
// static/prom.js is the dashboard's arithmetic — the Prometheus text
// format parser, rate over the poll window and histogram_quantile as
// Prometheus computes it — and runs under node too, for its tests.
//
// Imports: embed, io/fs and net/http only. httpapi mounts Handler
// (Config.UI); cmd/govllm leaves it out with --disable-ui.
package webui
