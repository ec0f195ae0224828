// Package httpapi is the OpenAI-compatible HTTP server: routes, JSON and
// SSE encoding, the error envelope, API-key auth, health, and the mount point
// of an injected /metrics handler.
//
// vLLM counterpart: vllm/entrypoints/openai/api_server.py with
// serving_completion.py, serving_chat.py, serving_models.py and
// serving_tokenization.py.
//
// Routes (anything else is a 404 envelope; a known path with another method
// a 405 with Allow):
//
//	POST /v1/completions       text completion, JSON or SSE (stream: true);
//	                           up to openai.MaxPrompts prompts per request
//	POST /v1/chat/completions  chat completion through the chat template
//	POST /v1/responses         OpenAI's Responses API, translated to and from
//	                           the chat path (responses*.go); typed SSE events
//	GET  /v1/responses/{id}    a stored response (bounded LRU, responseStore)
//	POST /v1/responses/{id}/cancel  400 for a stored (finished) response, as vLLM
//	GET  /v1/models            the served model names
//	POST /tokenize             prompt, or vLLM's chat form (messages, tools,
//	                           add_generation_prompt, continue_final_message,
//	                           chat_template_kwargs) → token ids
//	POST /detokenize           token ids → text
//	GET  /health, /ping        200 while the engine runs, 503 once it died
//	GET  /version              {"version": ...}
//	GET  /metrics              the injected Prometheus handler
//	GET  /, /ui/...            the injected page (Config.UI, package webui)
//
// With Config.APIKey set, /v1/* requires "Authorization: Bearer <key>".
//
// Imports: internal/openai (wire types), internal/chattemplate,
// internal/jsonvalue, internal/apierr, internal/llm
// (Request and typed errors), internal/output (Stream), internal/tokenizer,
// internal/sampling, internal/stats and net/http. Never Prometheus: /metrics
// and the HTTP-metrics middleware are injected through Config. The engine is
// consumed through the small Engine interface defined here, so the server is
// tested with a fake engine as well as with the real llm.AsyncEngine.
//
// Tools: a chat request's parsed tools, tool_choice and parallel_tool_calls
// (openai.ChatTools) are rendered into the prompt and kept on genRequest.tools
// for the tool-call parser. Without one, only tool_choice "none" is served
// (plain content, as vLLM does); "auto" (the default with tools),
// "required" and a named function are a 400 naming tool_choice with vLLM's
// message for "auto" without --enable-auto-tool-choice/--tool-call-parser.
//
// Invariants:
//   - the arrival time of a generation request is taken on the handler's
//     first line, before decoding, template rendering and tokenization;
//   - a request is fully validated (JSON, model, sampling params, every
//     prompt's length against max-model-len) before Engine.Generate is
//     called, so a bad request never reaches the engine and never moves
//     engine counters; with several prompts, one bad prompt rejects them all;
//   - each prompt of a completions request is its own engine request (id
//     "<id>-<i>" when there are several; the response id otherwise), with
//     its own queue, statistics and n sequences; choice index = prompt
//     index · n + sequence index; usage counts each prompt's tokens once;
//   - every failure is the OpenAI error envelope with Content-Type
//     application/json; errors are mapped to statuses in one place
//     (errors.go); a panic in a handler is a 500 envelope, never a crash;
//   - the engine requests of an HTTP request share one context derived from
//     the request's: a client that goes away, or one of them failing, aborts
//     them all (fanIn);
//   - SSE chunks are flushed as soon as they are written; a completions or
//     chat stream ends with "data: [DONE]"; a Responses API stream has an
//     "event:" line per event and ends with response.completed,
//     response.incomplete or response.failed.
package httpapi
