// Package openai holds the OpenAI-compatible wire types (requests, responses,
// streaming chunks, usage, logprobs, errors) for /v1/completions,
// /v1/chat/completions, /v1/models, /tokenize and /detokenize, and the pure
// conversions from a decoded request to sampling.Params.
//
// vLLM counterpart: vllm/entrypoints/openai/protocol.py (the pydantic models
// and their to_sampling_params methods).
//
// Imports: internal/sampling, internal/stats, internal/apierr and
// internal/jsonvalue only. Nothing here does I/O
// beyond decoding a request body handed in by the caller; the HTTP server
// (internal/httpapi) owns routing, status codes and streaming.
//
// Tools: a chat request's history messages (assistant tool_calls, tool
// messages with tool_call_id and name, text-part content arrays) decode into
// ChatMessage and are checked by CheckMessages; tools, tool_choice and
// parallel_tool_calls are checked by ParseTools into ChatTools (the form the
// tool-call parsers will consume). Every refusal names the field by its
// JSON path (messages[2].content[0].type, tools[1].function.parameters).
//
// Responses API: ResponsesRequest holds vLLM's ResponsesRequest fields
// (Check refuses those not implemented); ParseResponsesInput turns input
// items into ChatMessages as vLLM's construct_chat_messages_with_tool_call
// does; ParseResponsesTools reads the flat function tools into ChatTools;
// Response, its output items and ResponseEvent are the reply's shapes.
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
