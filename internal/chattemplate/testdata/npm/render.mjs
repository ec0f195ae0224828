// Renders chat templates with @huggingface/jinja for the Go comparison test.
// stdin: JSON array of {"template", "messages", "tools", "add_generation_prompt",
// "bos_token", "eos_token", "date_string"}; messages and tools are in the
// OpenAI request shape and are turned into what the template sees here,
// independently of the Go code, following vLLM's chat_utils
// (parse_chat_messages with the content format vLLM detects, then
// _postprocess_messages) and serving_chat ([tool.model_dump() ...]).
// stdout: JSON array, in order, of {"out": string, "format": string} (the
// content format used), {"raised": string} (the template called
// raise_exception) or {"err": string} (the renderer itself failed).
import { Environment, Template, parse, tokenize } from "@huggingface/jinja";
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

// vLLM's _detect_content_format on this renderer's AST: "openai" when a
// loop iterates over message['content'] (or message.content), message being
// the target of a loop over messages or over a variable set from messages;
// otherwise "string". A tuple target in a loop over messages ends the search
// with "string" (vLLM's assertion fails and it falls back to the default).
function nodes(root, type) {
  const out = [];
  const visit = (n) => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (n === null || typeof n !== "object") return;
    if (n.type === type) out.push(n);
    for (const v of Object.values(n)) if (v !== null && typeof v === "object") visit(v);
  };
  visit(root);
  return out;
}
function accesses(e, name, key) {
  switch (e.type) {
    case "FilterExpression":
    case "TestExpression":
      return accesses(e.operand, name, key);
    case "SelectExpression":
      return accesses(e.lhs, name, key);
    case "MemberExpression":
      if (e.property.type === "SliceExpression") return accesses(e.object, name, key);
      if (key === undefined || e.object.type !== "Identifier" || e.object.value !== name) return false;
      return e.computed ? e.property.type === "StringLiteral" && e.property.value === key
        : e.property.type === "Identifier" && e.property.value === key;
    case "Identifier":
      return key === undefined && e.value === name;
  }
  return false;
}
function contentFormat(template) {
  const ast = parse(tokenize(template, { lstrip_blocks: true, trim_blocks: true }));
  const fors = nodes(ast, "For");
  const names = ["messages"];
  for (let i = 0; i < names.length; i++) {
    for (const s of nodes(ast, "Set")) {
      if (s.value && s.assignee.type === "Identifier" && accesses(s.value, names[i]) && s.assignee.value !== names[i]) {
        names.push(s.assignee.value);
      }
    }
  }
  const items = [];
  for (const f of fors) {
    if (names.some((n) => accesses(f.iterable, n))) {
      if (f.loopvar.type !== "Identifier") return "string";
      items.push(f.loopvar.value);
    }
  }
  return fors.some((f) => items.some((m) => accesses(f.iterable, m, "content"))) ? "openai" : "string";
}

// vLLM _parse_chat_message_content: content as text parts, then a string
// ("\n"-joined) in the "string" format or a list of {"type": "text"} parts
// in the "openai" format; a tool message's content is always a string.
function conversation(messages, format) {
  return messages.map((m) => {
    const raw = m.content;
    const texts = raw === null || raw === undefined ? [] : typeof raw === "string" ? [raw] : raw.map((p) => p.text);
    const content = format === "openai" && m.role !== "tool"
      ? texts.map((text) => ({ type: "text", text }))
      : texts.join("\n");
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
  let format;
  try {
    format = contentFormat(c.template);
  } catch (e) {
    return { err: "parsing for the content format: " + String(e && e.message ? e.message : e) };
  }
  const context = {
    messages: conversation(c.messages, format),
    add_generation_prompt: c.add_generation_prompt,
    bos_token: c.bos_token,
    eos_token: c.eos_token,
    date_string: c.date_string,
  };
  if (c.tools) context.tools = tools(c.tools);
  try {
    return { out: new Template(c.template).render(context), format };
  } catch (e) {
    const msg = String(e && e.message ? e.message : e);
    return e instanceof Raised ? { raised: msg } : { err: msg };
  }
});
process.stdout.write(JSON.stringify(results));
