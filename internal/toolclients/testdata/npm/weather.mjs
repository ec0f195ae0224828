// weather.mjs: what the three tool-calling clients share — the get_weather
// tool (its JSON Schema, the same as a zod schema, and the function that
// runs it), a fetch that records every request and reply on the wire, and
// report(), which checks the recorded two-step conversation and prints it
// as one JSON line (exit code 1 on any deviation).
import { z } from "zod";

export const baseURL = process.env.OPENAI_BASE_URL;
export const model = process.env.MODEL;
if (!baseURL || !model) {
  console.error("usage: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 MODEL=name node SCRIPT.mjs");
  process.exit(2);
}

export const question = "What is the weather in Paris?";
export const description = "Current weather in a city";

// The tool's parameters, as JSON Schema and as zod (the Go test holds the
// same schema and validates the arguments against it).
export const weatherParameters = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 12 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
  },
  required: ["city", "unit"],
  additionalProperties: false,
};
export const WeatherArgs = z.object({
  city: z.string().max(12),
  unit: z.enum(["celsius", "fahrenheit"]),
}).strict();

// Step one's sampling: a seed makes the random-weight model's answer
// reproducible; the constraint bounds the call's length well under this.
export const callTokens = 400;
// Step two's answer only has to be some text.
export const answerTokens = 8;
export const seed = 3;

// A weather tool: records the arguments the client's loop handed it
// (after checking them with zod, so a client that passed something else
// fails here) and answers with a JSON text; calls and results are kept.
export function weatherTool() {
  const calls = [];
  const results = [];
  const run = (args) => {
    calls.push(WeatherArgs.parse(args));
    results.push(JSON.stringify({ city: args.city, temperature: 18, unit: args.unit, sky: "cloudy" }));
    return results.at(-1);
  };
  return { calls, results, run };
}

// recorder wraps fetch: every JSON request body is kept with its reply —
// a JSON body as it came, a stream (SSE) accumulated here into the same
// shape, independently of the client's own accumulator.
export function recorder() {
  const exchanges = [];
  const recordingFetch = async (url, init) => {
    const res = await fetch(url, init);
    const request = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    const text = await res.clone().text();
    let response = null;
    try {
      const sse = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
      response = sse ? accumulate(text) : JSON.parse(text);
    } catch {
      // left null: report() flags it
    }
    exchanges.push({ url: String(url), status: res.status, request, response });
    return res;
  };
  return { fetch: recordingFetch, exchanges };
}

// accumulate folds a chat completion stream's first choice into
// {choices: [{message: {content, tool_calls}, finish_reason}]}: content
// concatenated, each call (by index) with its id and name from its first
// delta and its arguments concatenated, as OpenAI documents the deltas.
function accumulate(sse) {
  const message = { content: null };
  const calls = [];
  let finish = null;
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const choice = JSON.parse(line.slice(6)).choices?.[0];
    if (!choice) continue; // the usage chunk
    const d = choice.delta ?? {};
    if (d.content) message.content = (message.content ?? "") + d.content;
    for (const tc of d.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { id: tc.id, type: tc.type, function: { name: "", arguments: "" } });
      c.function.name += tc.function?.name ?? "";
      c.function.arguments += tc.function?.arguments ?? "";
    }
    finish = choice.finish_reason ?? finish;
  }
  if (calls.length) message.tool_calls = calls;
  return { choices: [{ message, finish_reason: finish }] };
}

// report checks a two-step conversation — step one asked with toolChoice
// and came back as one get_weather call, the client ran the tool once
// with exactly the call's arguments, step two carried the tool's result
// back (tool message with the call's id) with tool_choice "none" and came
// back as text, which the client returned as finalText — prints the
// summary and sets exit code 1 when anything deviates.
export function report({ client, name, toolChoice, exchanges, tool, finalText }) {
  const { calls, results } = tool;
  const problems = [];
  const want = (ok, what) => ok || problems.push(what);
  want(exchanges.length === 2, `${exchanges.length} HTTP requests, want 2`);
  want(exchanges.every((e) => e.status === 200 && e.url.endsWith("/chat/completions")), "a request was not a 200 from /chat/completions");
  const [one, two] = exchanges.map((e) => e ?? {});
  const reply = (e) => e.response?.choices?.[0] ?? {};
  const wireCalls = reply(one).message?.tool_calls ?? [];
  want(JSON.stringify(one.request?.tool_choice) === JSON.stringify(toolChoice), `step one sent tool_choice ${JSON.stringify(one.request?.tool_choice)}`);
  want(wireCalls.length === 1 && wireCalls[0].function?.name === "get_weather", "step one did not answer one get_weather call");
  const args = wireCalls[0]?.function?.arguments;
  want(calls.length === 1, `the tool ran ${calls.length} times, want 1`);
  let parsed = null;
  try {
    parsed = JSON.parse(args);
  } catch {
    problems.push(`the call's arguments ${JSON.stringify(args)} are not JSON`);
  }
  want(JSON.stringify(calls[0]) === JSON.stringify(parsed), "the tool did not get the call's arguments");
  const toolMsg = (two.request?.messages ?? []).find((m) => m.role === "tool");
  want(toolMsg?.tool_call_id === wireCalls[0]?.id && toolMsg?.content === results[0], "step two did not carry the tool's result with the call's id");
  want(two.request?.tool_choice === "none" || two.request?.tools === undefined, "step two still offered the tools");
  want(!reply(two).message?.tool_calls?.length, "step two answered tool calls");
  want(typeof finalText === "string" && finalText !== "" && finalText === reply(two).message?.content, `final text ${JSON.stringify(finalText)} is not step two's content`);
  console.log(JSON.stringify({
    client,
    case: name,
    tool_choice: [one.request?.tool_choice ?? null, two.request?.tool_choice ?? null],
    stream: [one.request?.stream === true, two.request?.stream === true],
    parallel_tool_calls: one.request?.parallel_tool_calls ?? null,
    parameters: one.request?.tools?.[0]?.function?.parameters ?? null,
    arguments: args ?? null,
    tool_args: calls,
    finish_reasons: [reply(one).finish_reason ?? null, reply(two).finish_reason ?? null],
    final_text: finalText ?? null,
    problems,
  }));
  if (problems.length) process.exitCode = 1;
}
