// shapes.mjs: every response shape of govllm's completions and chat
// endpoints through the npm openai SDK (plain and streamed, logprobs, echo,
// usage, prompt_logprobs, tool calls), checking the fields the SDK does not
// check itself: stop_reason and system_fingerprint present, top_logprobs in
// rank order. Prints one JSON line per case; exits 1 on the first problem.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: "none", maxRetries: 0 });
const model = process.env.MODEL;

function fail(name, msg, obj) {
  console.error(`${name}: ${msg}\n${JSON.stringify(obj)}`);
  process.exit(1);
}

function descending(name, values, obj) {
  for (let i = 1; i < values.length; i++) {
    if (values[i] > values[i - 1]) fail(name, "top_logprobs not in rank order", obj);
  }
}

function common(name, resp) {
  if (typeof resp.system_fingerprint !== "string" || !resp.system_fingerprint) fail(name, "no system_fingerprint", resp);
  for (const ch of resp.choices) {
    if (!("stop_reason" in ch)) fail(name, "no stop_reason", ch);
  }
}

async function collect(name, stream) {
  const chunks = [];
  for await (const c of stream) {
    if (typeof c.system_fingerprint !== "string") fail(name, "chunk without system_fingerprint", c);
    chunks.push(c);
  }
  return chunks;
}

const cases = {
  async completion() {
    const r = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5, logprobs: 3, temperature: 0 });
    common("completion", r);
    for (const top of r.choices[0].logprobs.top_logprobs) descending("completion", Object.values(top), r);
    return { text: r.choices[0].text, finish: r.choices[0].finish_reason };
  },
  async completionEcho() {
    const r = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 2, logprobs: 1, echo: true, temperature: 0 });
    common("completionEcho", r);
    const lp = r.choices[0].logprobs;
    if (lp.token_logprobs[0] !== null || lp.top_logprobs[0] !== null || lp.tokens.length !== lp.token_logprobs.length) fail("completionEcho", "the echoed prompt's first token must have null logprobs", lp);
    if (!r.choices[0].text.startsWith("Once upon a time")) fail("completionEcho", "no echo", r);
    return { positions: lp.tokens.length };
  },
  async completionStream() {
    const s = await client.completions.create({ model, prompt: "Once upon a time", max_tokens: 5, stream: true, stream_options: { include_usage: true }, temperature: 0 });
    const chunks = await collect("completionStream", s);
    const last = chunks[chunks.length - 1];
    if (!last.usage || last.choices.length !== 0) fail("completionStream", "no usage chunk last", last);
    for (const c of chunks) for (const ch of c.choices) if (!("stop_reason" in ch)) fail("completionStream", "no stop_reason", ch);
    return { chunks: chunks.length, completion_tokens: last.usage.completion_tokens };
  },
  async chat() {
    const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 5, logprobs: true, top_logprobs: 3, temperature: 0 });
    common("chat", r);
    for (const pos of r.choices[0].logprobs.content) descending("chat", pos.top_logprobs.map((t) => t.logprob), r);
    return { content: r.choices[0].message.content, finish: r.choices[0].finish_reason };
  },
  async chatStream() {
    const s = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 5, stream: true, stream_options: { include_usage: true } });
    const chunks = await collect("chatStream", s);
    if (chunks[0].choices[0].delta.role !== "assistant") fail("chatStream", "the first chunk must carry the role", chunks[0]);
    const last = chunks[chunks.length - 1];
    if (!last.usage) fail("chatStream", "no usage chunk", last);
    return { chunks: chunks.length };
  },
  async promptLogprobs() {
    const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: 2, prompt_logprobs: 2 });
    common("promptLogprobs", r);
    if (!Array.isArray(r.prompt_logprobs) || r.prompt_logprobs[0] !== null || r.prompt_logprobs.length !== r.usage.prompt_tokens) fail("promptLogprobs", "prompt_logprobs: one entry per prompt token, null first", r);
    return { entries: r.prompt_logprobs.length };
  },
  async toolCall() {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string", maxLength: 10 } }, required: ["city"], additionalProperties: false } } }];
    const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Weather in Paris?" }], tools, tool_choice: "required", parallel_tool_calls: false, max_tokens: 100 });
    common("toolCall", r);
    const calls = r.choices[0].message.tool_calls;
    if (!calls || calls.length !== 1 || calls[0].function.name !== "get_weather" || r.choices[0].finish_reason !== "tool_calls") fail("toolCall", "want one get_weather call", r);
    JSON.parse(calls[0].function.arguments);
    return { arguments: calls[0].function.arguments };
  },
};

for (const [name, run] of Object.entries(cases)) {
  console.log(JSON.stringify({ case: name, ...(await run()) }));
}
