// Package openai holds the OpenAI-compatible wire types (requests, responses,
// streaming chunks, usage, logprobs, errors) for /v1/completions,
// /v1/chat/completions, /v1/models, /tokenize and /detokenize, and the pure
// conversions from a decoded request to sampling.Params.
//
// vLLM counterpart: vllm/entrypoints/openai/protocol.py (the pydantic models
// and their to_sampling_params methods).
//
// Imports: internal/sampling, internal/stats and internal/apierr only. Nothing here does I/O
// beyond decoding a request body handed in by the caller; the HTTP server
// (internal/httpapi) owns routing, status codes and streaming.
//
// Invariants:
//   - every decode or validation failure is a *apierr.Error naming the offending
//     field in its OpenAI spelling ("" when the body as a whole is bad), so
//     the server maps it to a 400 envelope in one place;
//   - optional request fields are pointers: absent means "use the default",
//     never "use zero";
//   - logprobs never encode -Inf (JSON cannot): they are clamped to
//     MinLogprob, as vLLM does.
package openai
