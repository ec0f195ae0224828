// prom.js: the dashboard's arithmetic. It parses the Prometheus text
// exposition format, takes rates between two scrapes, and computes
// histogram_quantile exactly as Prometheus does for classic histograms
// (promql/quantile.go: linear interpolation inside the bucket holding the
// rank, the lowest bucket starting at 0, the +Inf bucket answered with the
// upper bound of the one below it). Loaded by the page as a classic script
// (window.Prom) and by node (module.exports) for the tests.
"use strict";

(function (root) {
  // parseLabels reads `a="x",b="y"` starting after "{"; it returns the
  // labels and the index just past "}".
  function parseLabels(line, i) {
    const labels = {};
    while (i < line.length) {
      while (line[i] === " " || line[i] === ",") i++;
      if (line[i] === "}") return [labels, i + 1];
      const eq = line.indexOf("=", i);
      if (eq < 0 || line[eq + 1] !== '"') throw new Error("bad labels: " + line);
      const name = line.slice(i, eq).trim();
      let v = "";
      i = eq + 2;
      for (; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\") {
          i++;
          v += line[i] === "n" ? "\n" : line[i];
        } else {
          v += line[i];
        }
      }
      labels[name] = v;
      i++; // the closing quote
    }
    throw new Error("unterminated labels: " + line);
  }

  function parseValue(s) {
    if (s === "+Inf" || s === "Inf") return Infinity;
    if (s === "-Inf") return -Infinity;
    if (s === "NaN") return NaN;
    return Number(s);
  }

  // parse turns exposition text into samples {name, labels, value}.
  function parse(text) {
    const out = [];
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line === "" || line[0] === "#") continue;
      let i = 0;
      while (i < line.length && line[i] !== "{" && line[i] !== " ") i++;
      const name = line.slice(0, i);
      let labels = {};
      if (line[i] === "{") [labels, i] = parseLabels(line, i + 1);
      const value = parseValue(line.slice(i).trim().split(/\s+/)[0]);
      out.push({ name: name, labels: labels, value: value });
    }
    return out;
  }

  function matches(labels, want) {
    for (const k in want) if (labels[k] !== want[k]) return false;
    return true;
  }

  // sum adds the samples of one series name whose labels include want.
  function sum(samples, name, want) {
    let s = 0;
    for (const x of samples) if (x.name === name && matches(x.labels, want || {})) s += x.value;
    return s;
  }

  // sumBy is `sum by (label) (name)`: label value → sum.
  function sumBy(samples, name, label) {
    const out = {};
    for (const x of samples) {
      if (x.name !== name) continue;
      const k = x.labels[label];
      out[k] = (out[k] || 0) + x.value;
    }
    return out;
  }

  // rate is (new − old) / seconds for a counter, as Prometheus's rate over
  // a window holding the two scrapes; a reset (new < old) counts from 0.
  function rate(oldV, newV, seconds) {
    if (!(seconds > 0)) return NaN;
    const inc = newV >= oldV ? newV - oldV : newV;
    return inc / seconds;
  }

  // buckets is `sum by (le) (name_bucket)` as [{upperBound, count}].
  function buckets(samples, name) {
    const byLe = sumBy(samples, name + "_bucket", "le");
    return Object.keys(byLe).map((le) => ({ upperBound: parseValue(le), count: byLe[le] }));
  }

  // rateBuckets is `sum by (le) (rate(name_bucket[window]))` between two
  // scrapes taken `seconds` apart.
  function rateBuckets(oldSamples, newSamples, name, seconds) {
    const old = {};
    for (const b of buckets(oldSamples, name)) old[b.upperBound] = b.count;
    return buckets(newSamples, name).map((b) => ({
      upperBound: b.upperBound,
      count: rate(old[b.upperBound] || 0, b.count, seconds),
    }));
  }

  // histogramQuantile is PromQL's histogram_quantile(q, buckets) for
  // classic buckets {upperBound, count} (cumulative counts, any order).
  function histogramQuantile(q, bs) {
    if (Number.isNaN(q)) return NaN;
    if (q < 0) return -Infinity;
    if (q > 1) return Infinity;
    const sorted = bs.slice().sort((a, b) => a.upperBound - b.upperBound);
    if (sorted.length < 2 || sorted[sorted.length - 1].upperBound !== Infinity) return NaN;
    // Coalesce equal bounds, then force monotonic counts (Prometheus's
    // coalesceBuckets and ensureMonotonic).
    const b = [];
    for (const x of sorted) {
      const last = b[b.length - 1];
      if (last && last.upperBound === x.upperBound) last.count += x.count;
      else b.push({ upperBound: x.upperBound, count: x.count });
    }
    for (let i = 1; i < b.length; i++) if (b[i].count < b[i - 1].count) b[i].count = b[i - 1].count;
    if (b.length < 2) return NaN;
    const observations = b[b.length - 1].count;
    if (!(observations > 0)) return NaN;
    let rank = q * observations;
    let i = b.findIndex((x) => x.count >= rank);
    if (i === b.length - 1) return b[b.length - 2].upperBound;
    if (i === 0 && b[0].upperBound <= 0) return b[0].upperBound;
    let start = 0;
    let count = b[i].count;
    if (i > 0) {
      start = b[i - 1].upperBound;
      count -= b[i - 1].count;
      rank -= b[i - 1].count;
    }
    return start + (b[i].upperBound - start) * (rank / count);
  }

  const api = { parse, sum, sumBy, rate, buckets, rateBuckets, histogramQuantile };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.Prom = api;
})(typeof window !== "undefined" ? window : this);
