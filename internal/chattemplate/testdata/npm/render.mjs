// Renders chat templates with @huggingface/jinja for the Go comparison test.
// stdin: JSON array of {"template": string, "context": object}
// stdout: JSON array of {"out": string} or {"err": string}, in order.
import { Template } from "@huggingface/jinja";
import { readFileSync } from "node:fs";

const cases = JSON.parse(readFileSync(0, "utf8"));
const results = cases.map(({ template, context }) => {
  try {
    // raise_exception is a built-in of @huggingface/jinja.
    return { out: new Template(template).render(context) };
  } catch (e) {
    return { err: String(e && e.message ? e.message : e) };
  }
});
process.stdout.write(JSON.stringify(results));
