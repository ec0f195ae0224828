package chattemplate

// The conversations every template is rendered with, in the OpenAI request
// shape (messages and tools). The Go side turns them into Message and Tool
// values (decodeConversation); the reference side (testdata/npm/render.mjs)
// applies vLLM's rules to the same JSON on its own.

// A tool with neither description nor parameters ("tools-bare" below)
// reaches the template with both null, as vLLM's model_dump gives them.

// weatherTools are two function tools: nested objects, enums, arrays,
// unicode descriptions, keys in non-alphabetical order.
const weatherTools = `[
 {"type": "function", "function": {
   "name": "get_weather",
   "description": "Météo actuelle — current weather for a city ☀",
   "parameters": {"type": "object",
     "properties": {
       "location": {"type": "string", "description": "City, e.g. Zürich"},
       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
       "options": {"type": "object", "properties": {"days": {"type": "integer"}, "hourly": {"type": "boolean"}}}
     },
     "required": ["location"]}}},
 {"type": "function", "function": {
   "name": "search_docs",
   "description": "Search the documentation",
   "parameters": {"type": "object",
     "properties": {"query": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
     "required": ["query", "tags"]},
   "strict": true}}
]`

var conversations = []struct {
	name     string
	messages string
	tools    string // "" = no tools variable
}{
	{"user", `[{"role": "user", "content": "Hello!"}]`, ""},
	{"system-user", `[{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "Where is the treasure?"}]`, ""},
	{"multi-turn", `[
		{"role": "system", "content": "  Be brief.\n"},
		{"role": "user", "content": "What is 2+2?"},
		{"role": "assistant", "content": " 4 "},
		{"role": "user", "content": "And in French? «quatre» — ünïcode ✓\nnew line"}]`, ""},
	{"user-assistant", `[{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "hi"}]`, ""},
	{"roles-not-alternating", `[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]`, ""},
	{"quotes-and-braces", `[{"role": "user", "content": "{{ not a tag }} {% nope %} \"quoted\" 'single' \\n backslash"}]`, ""},
	{"content-parts", `[
		{"role": "system", "content": [{"type": "text", "text": "You are terse."}]},
		{"role": "user", "content": [{"type": "text", "text": "First part."}, {"type": "text", "text": "Second part ✓"}]}]`, ""},
	{"tools-first-turn", `[
		{"role": "system", "content": "You can call tools."},
		{"role": "user", "content": "What's the weather in Zürich?"}]`, weatherTools},
	{"tools-one-call", `[
		{"role": "system", "content": "You can call tools."},
		{"role": "user", "content": "What's the weather in Zürich?"},
		{"role": "assistant", "content": null, "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Zürich\", \"unit\": \"celsius\", \"options\": {\"days\": 2, \"hourly\": false}}"}}]},
		{"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 21, \"sky\": \"sunny ☀\"}"},
		{"role": "assistant", "content": "It is 21 °C and sunny in Zürich."}]`, weatherTools},
	{"tools-parallel-calls", `[
		{"role": "user", "content": "Weather in Paris and in Tokyo, please."},
		{"role": "assistant", "content": "", "tool_calls": [
			{"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}},
			{"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"東京\", \"unit\": \"celsius\"}"}}]},
		{"role": "tool", "tool_call_id": "call_a", "name": "get_weather", "content": "18 C, cloudy"},
		{"role": "tool", "tool_call_id": "call_b", "name": "get_weather", "content": [{"type": "text", "text": "25 C"}, {"type": "text", "text": "clear"}]},
		{"role": "assistant", "content": "Paris: 18 °C, cloudy. Tokyo: 25 °C, clear."}]`, weatherTools},
	{"tools-awaiting-answer", `[
		{"role": "user", "content": "Find docs about streaming."},
		{"role": "assistant", "content": "Let me search.", "tool_calls": [
			{"id": "call_s", "type": "function", "function": {"name": "search_docs", "arguments": "{\"query\": \"streaming\", \"tags\": [\"sse\", \"http\"]}"}}]},
		{"role": "tool", "tool_call_id": "call_s", "content": "Found 2 pages."}]`, weatherTools},
	{"tools-bare", `[{"role": "user", "content": "Ping the server."}]`,
		`[{"type": "function", "function": {"name": "ping"}}]`},
	{"tools-empty-list", `[{"role": "user", "content": "Hi"}]`, `[]`},
	{"tool-history-without-tools", `[
		{"role": "user", "content": "Weather in Oslo?"},
		{"role": "assistant", "content": null, "tool_calls": [
			{"id": "call_o", "type": "function", "function": {"name": "get_weather", "arguments": "not json"}}]},
		{"role": "tool", "tool_call_id": "call_o", "content": "-3 C"},
		{"role": "assistant", "content": "It is -3 °C in Oslo."},
		{"role": "user", "content": "Thanks!"}]`, ""},
}
