// Reference pre-tokenizer split for the Go tests of internal/tokenizer: the
// GPT-2, Llama 3 and Qwen2 regexes run by JavaScript's RegExp (which, unlike
// Go's regexp, has lookahead). JavaScript has no inline (?i:...), so the
// contraction group is spelled out case by case, as transformers.js does.
// Usage: node split.js gpt2|llama3|qwen2 < texts.json > pieces.json
"use strict";
const ci = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const patterns = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  llama3: ci + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2: ci + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
const src = patterns[process.argv[2]];
if (!src) {
  console.error("usage: node split.js gpt2|llama3|qwen2 < texts.json");
  process.exit(2);
}
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = texts.map((t) => {
    // Split with behaviour "Isolated": matches and the gaps between them.
    const pieces = [];
    let last = 0;
    for (const m of t.matchAll(new RegExp(src, "gu"))) {
      if (m.index > last) pieces.push(t.slice(last, m.index));
      pieces.push(m[0]);
      last = m.index + m[0].length;
    }
    if (last < t.length) pieces.push(t.slice(last));
    return pieces;
  });
  process.stdout.write(JSON.stringify(out));
});
