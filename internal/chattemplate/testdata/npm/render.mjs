// Renders chat templates with @huggingface/jinja for the Go comparison test.
// stdin: JSON array of {"template", "messages", "tools", "add_generation_prompt",
// "bos_token", "eos_token", "date_string"}; messages and tools are in the
// OpenAI request shape and are turned into what the template sees here,
// independently of the Go code, following vLLM's chat_utils
// (parse_chat_messages with the "string" content format, then
// _postprocess_messages) and serving_chat ([tool.model_dump() ...]).
// stdout: JSON array, in order, of {"out": string}, {"raised": string} (the
// template called raise_exception) or {"err": string} (the renderer itself
// failed).
import { Environment, Template } from "@huggingface/jinja";
import { readFileSync } from "node:fs";

// Pin "now" for the built-in strftime_now (it calls new Date()) to
// 26 July 2024 09:30 local time, the Go test's pinnedNow.
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(2024, 6, 26, 9, 30, 0);
    else super(...args);
  }
};

// vLLM _postprocess_messages: JSON-string arguments are parsed; invalid or
// non-string, non-object arguments become {}.
function parseArguments(a) {
  if (typeof a === "string") {
    try { return JSON.parse(a); } catch { return {}; }
  }
  return a !== null && typeof a === "object" ? a : {};
}

// vLLM _parse_chat_message_content with content_format "string".
function conversation(messages) {
  return messages.map((m) => {
    let content = m.content;
    if (content === null || content === undefined) content = "";
    else if (typeof content !== "string") content = content.map((p) => p.text).join("\n");
    const out = { role: m.role, content };
    if (m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: c.id,
        function: { arguments: parseArguments(c.function.arguments), name: c.function.name },
        type: c.type,
      }));
    }
    if (m.role === "tool" && "tool_call_id" in m) out.tool_call_id = m.tool_call_id;
    if (typeof m.name === "string") out.name = m.name;
    return out;
  });
}

// pydantic model_dump of vLLM's ChatCompletionToolsParam.
function tools(list) {
  return list.map((t) => {
    const f = t.function;
    const fn = { name: f.name, description: f.description ?? null, parameters: f.parameters ?? null };
    if ("strict" in f) fn.strict = f.strict;
    return { type: "function", function: fn };
  });
}

// Mark raise_exception's errors, so a template's own refusal is told apart
// from a failure of the renderer.
class Raised extends Error {}
const declare = Environment.prototype.set;
Environment.prototype.set = function (name, value) {
  if (name === "raise_exception") {
    value = (args) => {
      throw new Raised(args);
    };
  }
  return declare.call(this, name, value);
};

const cases = JSON.parse(readFileSync(0, "utf8"));
const results = cases.map((c) => {
  const context = {
    messages: conversation(c.messages),
    add_generation_prompt: c.add_generation_prompt,
    bos_token: c.bos_token,
    eos_token: c.eos_token,
    date_string: c.date_string,
  };
  if (c.tools) context.tools = tools(c.tools);
  try {
    return { out: new Template(c.template).render(context) };
  } catch (e) {
    const msg = String(e && e.message ? e.message : e);
    return e instanceof Raised ? { raised: msg } : { err: msg };
  }
});
process.stdout.write(JSON.stringify(results));
