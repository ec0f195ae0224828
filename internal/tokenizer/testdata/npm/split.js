// Reference pre-tokenizer split for the Go tests of internal/tokenizer: the
// pre-tokenizer regexes run by JavaScript's RegExp (which, unlike Go's
// regexp, has lookahead). A pre-tokenizer is a list of regexes, each splitting
// every piece the previous one produced, as llama.cpp's regex lists (and a
// Hugging Face Sequence of Split pre-tokenizers) do. JavaScript has no inline
// (?i:...), so the contraction group is spelled out case by case, as
// transformers.js and llama.cpp do.
// Usage: node split.js NAME < texts.json > pieces.json
"use strict";
const ci = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const cjk = "[一-龥ࠀ-一가-퟿]+";
const patterns = {
  gpt2: [gpt2],
  llama3: [ci + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
  qwen2: [ci + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
  qwen35: [ci + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
  "seed-coder": [ci + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
  bailingmoe: ["'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"],
  // llama.cpp's llm_tokenizer_bpe lists (src/llama-vocab.cpp).
  starcoder: ["\\p{N}", gpt2],
  falcon: ["[\\p{P}\\$\\+<=>\\^~\\|`]+", gpt2, "[0-9][0-9][0-9]"],
  default: ["[\\p{P}\\$\\+<=>\\^~\\|]+", gpt2, "\\p{N}+", "[0-9][0-9][0-9]"],
  "deepseek-coder": ["[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", cjk, "\\p{N}"],
  // The regexes of Mistral's Tekken and of GPT-4o / Llama 4, as their
  // tokenizer.json files write them (JavaScript has \p{Lu} and friends).
  tekken: [
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  "gpt-4o": [
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" + ci + "?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" + ci + "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  // Hugging Face's Punctuation pre-tokenizer (Isolated): ASCII or Unicode
  // punctuation, one character each.
  punct: ["[\\p{P}\\$\\+<=>\\^~\\|`]"],
  bloom: [" ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"],
  viking: [" ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+", "\\p{N}"],
  "deepseek-v3": [
    "\\p{N}{1,3}",
    "[\\u4e00-\\u9fa5\\u3040-\\u309f\\u30a0-\\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  "deepseek-llm": [
    "[\\r\\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u{1f7d}ᾀ-ᾴᾶ-ᾼ\u{1fbe}ῂ-ῄῆ-ῌῐ-\u{1fd3}ῖ-\u{1fdb}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u{2126}ℨ\u{212a}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    cjk,
    "\\p{N}+",
  ],
};
const srcs = patterns[process.argv[2]];
if (!srcs) {
  console.error("usage: node split.js " + Object.keys(patterns).join("|") + " < texts.json");
  process.exit(2);
}
// Split with behaviour "Isolated": matches and the gaps between them.
function isolate(t, re) {
  const pieces = [];
  let last = 0;
  for (const m of t.matchAll(re)) {
    if (m.index > last) pieces.push(t.slice(last, m.index));
    pieces.push(m[0]);
    last = m.index + m[0].length;
  }
  if (last < t.length) pieces.push(t.slice(last));
  return pieces;
}
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const res = srcs.map((src) => new RegExp(src, "gu"));
  const out = texts.map((t) => res.reduce((pieces, re) => pieces.flatMap((p) => isolate(p, re)), [t]));
  process.stdout.write(JSON.stringify(out));
});
