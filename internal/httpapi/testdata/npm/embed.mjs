// Runs the real OpenAI clients against a govllm server's /v1/embeddings and
// prints what they returned as one JSON object:
//   node embed.mjs BASE_URL MODEL
// sdkDefault: the openai SDK's embeddings.create with no encoding_format
// (the SDK asks for base64 and decodes the little-endian float32 itself);
// sdkFloat: the same with encoding_format "float"; lcDocs / lcQuery:
// LangChain's OpenAIEmbeddings.embedDocuments and embedQuery.
import OpenAI from "openai";
import { OpenAIEmbeddings } from "@langchain/openai";

const [baseURL, model] = process.argv.slice(2);
const texts = ["Once upon a time", "The cat sat on the mat.", "Once upon a time"];

const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey: "none", maxRetries: 0 });
const def = await client.embeddings.create({ model, input: texts });
const flt = await client.embeddings.create({ model, input: texts, encoding_format: "float" });

const lc = new OpenAIEmbeddings({ model, apiKey: "none", maxRetries: 0, configuration: { baseURL: baseURL + "/v1" } });
const lcDocs = await lc.embedDocuments(texts);
const lcQuery = await lc.embedQuery(texts[1]);

const vectors = (r) => r.data.sort((a, b) => a.index - b.index).map((d) => Array.from(d.embedding));
console.log(JSON.stringify({
  sdkDefault: vectors(def),
  sdkFloat: vectors(flt),
  usage: def.usage,
  object: def.object,
  model: def.model,
  lcDocs,
  lcQuery,
}));
