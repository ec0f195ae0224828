// parse.mjs: the npm openai SDK's structured outputs against a running
// server. For each case it builds response_format with zodResponseFormat,
// calls client.chat.completions.parse() (the SDK checks the reply against
// the zod schema and throws when it does not parse), and prints one JSON
// line: the case, the JSON Schema the SDK sent, the raw content, the
// parsed value, the finish reason and whether it asked for compact JSON. The Go test validates each content
// against its schema with a JSON Schema library.
//
// Usage: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 MODEL=name node parse.mjs
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const Person = z.object({
  name: z.string().max(12),
  age: z.number().int().min(0).max(150),
  pets: z.array(z.enum(["cat", "dog"])).max(2),
});

const Review = z.object({
  title: z.string().min(1).max(16),
  rating: z.number().min(1).max(5),
  verdict: z.enum(["buy", "skip"]),
  author: z.object({ name: z.string().max(10), email: z.string().max(20).nullable() }),
  tags: z.array(z.string().max(8)).min(1).max(3),
});

// The review case also sends vLLM's structured_outputs.disable_any_whitespace
// (no whitespace between JSON tokens), which applies to response_format.
const cases = [
  { name: "person", schema: Person, prompt: "Describe a person.", seed: 1, compact: false },
  { name: "review", schema: Review, prompt: "Review a book.", seed: 2, compact: true },
];

const client = new OpenAI({ apiKey: "unused", maxRetries: 0 });
for (const c of cases) {
  const format = zodResponseFormat(c.schema, c.name);
  const completion = await client.chat.completions.parse({
    model: process.env.MODEL,
    messages: [{ role: "user", content: c.prompt }],
    response_format: format,
    max_tokens: 400,
    temperature: 1,
    seed: c.seed,
    ...(c.compact ? { structured_outputs: { disable_any_whitespace: true } } : {}),
  });
  const choice = completion.choices[0];
  console.log(JSON.stringify({
    case: c.name,
    schema: format.json_schema.schema,
    content: choice.message.content,
    parsed: choice.message.parsed,
    finish_reason: choice.finish_reason,
    compact: c.compact,
  }));
}
