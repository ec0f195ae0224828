// Package bench is govllm's serving benchmark (`govllm bench serve`, vLLM
// `vllm bench serve`): vLLM's datasets random (seeded synthetic, with a
// shared prefix), sharegpt (a ShareGPT JSON), custom (a JSONL of
// prompts) and prefix_repetition, built and counted with the server's own
// /tokenize; vLLM's arrival
// process (Poisson or gamma with burstiness, all at once, or a linear or
// exponential ramp-up), a concurrency cap, streaming OpenAI requests, and
// the report: TTFT, TPOT, ITL, E2EL and client-queue statistics at the
// chosen percentiles, request goodput under SLOs, request and token
// throughput, vLLM's result table and JSON result (its field names), a
// latency plot, a cross-check of the servers' own /metrics (summed over
// replicas) against what the client measured, and, on request, the
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
