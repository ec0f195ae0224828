// Package bench is govllm's serving benchmark (`govllm bench serve`, vLLM
// `vllm bench serve`): a seeded synthetic dataset, an arrival process
// (Poisson or gamma with burstiness, or all at once), a concurrency cap,
// streaming OpenAI requests, and the report: TTFT, TPOT, ITL and E2EL
// statistics, request and token throughput, a result table, a JSON result
// with vLLM's field names, a latency plot, a cross-check of the server's
// own /metrics against what the client measured, and, on request, the
// latency of /metrics scrapes taken while the server is under the load.
//
// Clocks: every client figure is a difference of time.Time values read
// with the monotonic clock. TTFT is the time to the first chunk carrying
// content, ITL the gaps between content chunks, TPOT = (latency − TTFT) /
// (output tokens − 1), E2EL the whole request.
//
// Imports: net/http and encoding/json from the standard library and
// prometheus/common/expfmt to parse /metrics. Nothing internal.
package bench
