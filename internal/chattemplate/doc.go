// Package chattemplate renders chat conversations into prompt text with the
// model's Jinja chat template (Hugging Face tokenizer_config.json
// "chat_template", GGUF tokenizer.chat_template, or --chat-template).
//
// vLLM counterpart: vllm/entrypoints/chat_utils.py (apply_hf_chat_template),
// which calls transformers' Jinja2 environment.
//
// Imports: github.com/ardanlabs/jinja only.
//
// Engine choice: github.com/ardanlabs/jinja renders every template under
// testdata/templates (Llama 3, Llama 3.2 with strftime_now and
// raise_exception, Llama 2, Mistral, ChatML/SmolLM2, Zephyr/TinyLlama with
// its newline-separated tags, the stories260K-hf template and Default) over
// six conversations byte-identically to @huggingface/jinja, the renderer of
// transformers.js (TestMatchesHuggingFaceJinja runs it under node from
// testdata/npm). It applies trim_blocks/lstrip_blocks as Hugging Face does,
// supports what these templates use (the strip method, the trim filter,
// slicing, loop variables, raise_exception, strftime_now), and is
// concurrency-safe after Compile, so gonja was not needed. Llama 3.2's
// "Today Date" comes from strftime_now; the comparison pins date_string.
//
// Invariants:
//   - the template variables are messages, add_generation_prompt, bos_token,
//     eos_token, raise_exception, strftime_now, plus per-request kwargs
//     (which cannot override the first four);
//   - an error raised by the template itself wraps ErrTemplate (the caller
//     answers 400); any other failure is a server-side template bug;
//   - Default (used when there is no template) is
//     "<bos>role: content\n" per message, then "assistant:" when a
//     generation prompt is requested.
//
// Known difference from Python Jinja: dicts passed through kwargs iterate in
// sorted-key order, not insertion order.
package chattemplate
