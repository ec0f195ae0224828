// run.js evaluates static/prom.js for webui_test.go: it reads one JSON
// request on stdin and prints the results as JSON (numbers as strings, so
// that Infinity and NaN survive).
"use strict";
const Prom = require("../static/prom.js");

const num = (s) => (s === "+Inf" ? Infinity : Number(s));
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const out = {};
  if (req.quantiles) {
    out.quantiles = req.quantiles.map((c) =>
      String(Prom.histogramQuantile(c.q, c.buckets.map((b) => ({ upperBound: num(b.le), count: b.count })))));
  }
  if (req.text !== undefined) {
    const samples = Prom.parse(req.text);
    out.samples = samples.map((s) => ({ name: s.name, labels: s.labels, value: String(s.value) }));
    out.sumBy = Prom.sumBy(samples, req.sumBy.name, req.sumBy.label);
  }
  if (req.rate) {
    const r = req.rate;
    const old = Prom.parse(r.old), cur = Prom.parse(r.cur);
    const bs = Prom.rateBuckets(old, cur, r.name, r.seconds);
    out.rateQuantile = String(Prom.histogramQuantile(r.q, bs));
    out.counterRate = String(Prom.rate(r.counter[0], r.counter[1], r.seconds));
  }
  process.stdout.write(JSON.stringify(out));
});
