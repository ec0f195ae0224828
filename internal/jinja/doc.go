// Package jinja is a Jinja template engine for LLM chat templates: a fork
// of github.com/ardanlabs/jinja v1.8.0 (Apache License 2.0, Copyright 2026
// Ardan Labs; the licence is in LICENSE in this directory), vendored so the
// chat templates of real models render as Python's Jinja does.
//
// Changes from v1.8.0 (see internal/chattemplate/doc.go for why and the
// measured effect):
//   - tojson follows Python's json.dumps as transformers calls it: keys in
//     insertion order also with indent (upstream sorted them and escaped
//     HTML through encoding/json there), Python's indent layout and float
//     spelling, and the ensure_ascii and sort_keys arguments;
//   - the % operator on a string is Python printf-style formatting
//     (upstream computed an integer modulo), and the format filter exists;
//   - a dict method (items, keys, values, get, pop, update) wins over a key
//     of the same name in attribute access, as Python's getattr-first
//     lookup does (a JSON schema's "items" key no longer hides items());
//   - strings inside printed lists and dicts use Python's repr (double
//     quotes around a single quote, \n and backslashes escaped);
//   - floats print as Python's repr (3.0, not 3);
//   - none prints as None ({{ x }}, ~, %s), as Python's Jinja does
//     (upstream printed nothing, as @huggingface/jinja does);
//   - Template.LoopsOverMessageContent reports vLLM's content-format rule
//     (whether a template loops over a message's content) from the AST;
//   - the package comment moved here; upstream's tests, which read its own
//     template corpus, are not vendored (internal/chattemplate's reference
//     test covers the engine).
//
// Imports: the standard library only.
//
// Invariants: a compiled Template is safe for concurrent use; Dict keeps
// insertion order.
package jinja
