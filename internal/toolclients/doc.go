// Package toolclients holds no Go code: its testdata/npm directory is a
// Node project (package.json and lock file; CI runs npm ci there) of real
// JavaScript tool-calling clients — the npm openai SDK's runTools,
// LangChain JS's bindTools, the AI SDK's generateText with tools — each
// driving a two-step weather conversation against a running server and
// printing what went over the wire. cmd/govllm's TestToolClientsNode
// serves models, runs them and checks the results.
package toolclients
