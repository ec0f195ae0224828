// openai.mjs: the npm openai SDK's tool loop, client.chat.completions.runTools,
// through a two-step weather conversation. runTools repeats its request
// with the same tool_choice until the model stops calling tools, so with
// "required" it would call until maxChatCompletions; the loop is therefore
// run twice: once with the forced choice (maxChatCompletions 1 for
// "required"; a named function stops runTools by itself after its call),
// which runs the tool on the parsed arguments; step two sends the runner's
// messages (question, call, tool result) with tool_choice "none" through
// chat.completions.create — not runTools, which throws
// LengthFinishReasonError on an answer cut by max_tokens, as the tiny test
// budget cuts every answer of the random-weight model. The runner's
// messages carry the SDK's parse results (tool_calls[].parsed_arguments,
// parsed), which runTools strips before it sends them; a request built
// from them must strip them too, since govllm answers 400 to unknown fields.
//
// The "required-streamed" case streams step one (runTools with stream:
// true, the SDK's ChatCompletionStream accumulator builds the call).
//
// Usage: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 MODEL=name node openai.mjs
import OpenAI from "openai";
import { answerTokens, baseURL, callTokens, description, model, question, recorder, report, seed, weatherParameters, weatherTool } from "./weather.mjs";

const cases = [
  { name: "required", toolChoice: "required", options: { maxChatCompletions: 1 } },
  { name: "required-streamed", toolChoice: "required", options: { maxChatCompletions: 1 }, stream: true },
  { name: "named", toolChoice: { type: "function", function: { name: "get_weather" } }, options: {} },
];

for (const c of cases) {
  const rec = recorder();
  const client = new OpenAI({ baseURL, apiKey: "none", maxRetries: 0, fetch: rec.fetch });
  const tool = weatherTool();
  const tools = [{
    type: "function",
    function: { name: "get_weather", description, parameters: weatherParameters, function: tool.run, parse: JSON.parse },
  }];
  const sampling = { model, temperature: 1, seed };
  const first = client.chat.completions.runTools({
    ...sampling,
    messages: [{ role: "user", content: question }],
    tools,
    tool_choice: c.toolChoice,
    parallel_tool_calls: false, // one call: a random-weight model never stops adding calls
    max_completion_tokens: callTokens,
    ...(c.stream ? { stream: true } : {}),
  }, c.options);
  await first.done();
  const second = await client.chat.completions.create({
    ...sampling,
    messages: first.messages.map(requestMessage),
    tools: tools.map((t) => ({ type: "function", function: { name: t.function.name, description, parameters: weatherParameters } })),
    tool_choice: "none",
    max_completion_tokens: answerTokens,
  });
  const finalText = second.choices[0].message.content;
  report({ client: "openai", name: c.name, toolChoice: c.toolChoice, exchanges: rec.exchanges, tool, finalText });
}

// requestMessage is a runner message as a request message: an assistant
// message without the SDK's parse results.
function requestMessage(m) {
  if (m.role !== "assistant") return m;
  const calls = m.tool_calls?.map(({ id, type, function: f }) => ({ id, type, function: { name: f.name, arguments: f.arguments } }));
  return { role: "assistant", content: m.content, ...(calls ? { tool_calls: calls } : {}) };
}
