// dashboard.js: polls /metrics every second and draws the panels of vLLM's
// reference Grafana dashboard (deploy/grafana/govllm-dashboard.json) with
// the same formulas, evaluated in the page over the scrapes it keeps:
// rates over the last poll interval for throughput, and
// histogram_quantile(q, sum by (le) (rate(X_bucket[window]))) for latency.
"use strict";

(function () {
  const $ = App.$;
  const POLL_MS = 1000;
  const WINDOW_S = 60; // the rate window of the percentiles and hit rate
  const scrapes = []; // {t: seconds, samples}, oldest first, one window long
  const series = { running: [], waiting: [], promptTps: [], genTps: [], kv: [] };

  const HISTOGRAMS = [
    ["Time to first token", "vllm:time_to_first_token_seconds"],
    ["Inter-token latency", "vllm:inter_token_latency_seconds"],
    ["End-to-end latency", "vllm:e2e_request_latency_seconds"],
  ];

  function fmtSeconds(s) {
    if (!Number.isFinite(s)) return "–";
    return s < 1 ? (s * 1000).toFixed(1) + " ms" : s.toFixed(2) + " s";
  }

  function fmtNumber(v, digits) {
    return Number.isFinite(v) ? v.toFixed(digits) : "–";
  }

  // tile sets (creating it the first time) one stat; data-value holds the
  // raw number for scripts and tests.
  function tile(key, label, value, text) {
    let el = document.querySelector(`#tiles [data-key="${key}"]`);
    if (!el) {
      el = document.createElement("div");
      el.className = "tile";
      el.dataset.key = key;
      el.innerHTML = '<span class="label"></span><span class="value"></span>';
      el.querySelector(".label").textContent = label;
      $("tiles").append(el);
    }
    const v = el.querySelector(".value");
    v.dataset.value = String(value);
    v.textContent = text;
  }

  function push(name, v) {
    series[name].push(v);
    if (series[name].length > WINDOW_S) series[name].shift();
  }

  // chart draws the series as polylines scaled to their common maximum.
  function chart(id, names) {
    const svg = $(id);
    const all = names.flatMap((n) => series[n]).filter(Number.isFinite);
    const max = Math.max(1, ...all);
    const ns = "http://www.w3.org/2000/svg";
    svg.replaceChildren();
    names.forEach((n, i) => {
      // The newest point is at the right edge, one poll per step.
      const off = WINDOW_S - series[n].length;
      const pts = series[n].map((v, x) => `${((x + off) * 300) / (WINDOW_S - 1)},${78 - ((Number.isFinite(v) ? v : 0) * 70) / max}`);
      const line = document.createElementNS(ns, "polyline");
      line.setAttribute("points", pts.join(" "));
      line.setAttribute("class", "line" + i);
      svg.append(line);
    });
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", "2");
    label.setAttribute("y", "10");
    label.textContent = "max " + fmtNumber(max, max < 10 ? 2 : 0);
    svg.append(label);
  }

  function rows(tbody, data) {
    tbody.replaceChildren();
    for (const cells of data) {
      const tr = document.createElement("tr");
      cells.forEach((c, i) => {
        const td = document.createElement(i === 0 ? "th" : "td");
        if (i === 0) td.scope = "row";
        td.textContent = c;
        tr.append(td);
      });
      tbody.append(tr);
    }
  }

  // latency fills the percentile table over the window [old, cur]; each
  // cell's data-value holds the number in seconds.
  function latency(old, cur, dt) {
    const values = HISTOGRAMS.map(([, name]) => {
      const bs = Prom.rateBuckets(old.samples, cur.samples, name, dt);
      const qs = [0.5, 0.9, 0.99].map((q) => Prom.histogramQuantile(q, bs));
      const mean = Prom.rate(Prom.sum(old.samples, name + "_sum"), Prom.sum(cur.samples, name + "_sum"), dt) /
        Prom.rate(Prom.sum(old.samples, name + "_count"), Prom.sum(cur.samples, name + "_count"), dt);
      return qs.concat([mean]);
    });
    const tbody = $("latency").tBodies[0];
    rows(tbody, values.map((vs, i) => [HISTOGRAMS[i][0]].concat(vs.map(fmtSeconds))));
    Array.from(tbody.rows).forEach((tr, i) => tr.querySelectorAll("td").forEach((td, j) => (td.dataset.value = String(values[i][j]))));
  }

  function reasons(cur) {
    const by = Prom.sumBy(cur.samples, "vllm:request_success_total", "finished_reason");
    const keys = Object.keys(by).sort();
    const tbody = $("reasons").tBodies[0];
    rows(tbody, keys.map((k) => [k, String(by[k])]));
    Array.from(tbody.rows).forEach((tr, i) => (tr.dataset.reason = keys[i]));
    return keys.reduce((s, k) => s + by[k], 0);
  }

  function config(cur) {
    const info = cur.samples.find((s) => s.name === "vllm:cache_config_info");
    const labels = info ? info.labels : {};
    rows($("config").tBodies[0], Object.keys(labels).sort().map((k) => [k, labels[k]]));
  }

  // counters draws the tiles of totals and of rates over the last interval.
  function counters(prev, cur, old, dtWindow) {
    const s = (name, want) => Prom.sum(cur.samples, name, want);
    const dt = cur.t - prev.t;
    const promptTps = Prom.rate(Prom.sum(prev.samples, "vllm:prompt_tokens_total"), s("vllm:prompt_tokens_total"), dt);
    const genTps = Prom.rate(Prom.sum(prev.samples, "vllm:generation_tokens_total"), s("vllm:generation_tokens_total"), dt);
    const hits = Prom.rate(Prom.sum(old.samples, "vllm:prefix_cache_hits_total"), s("vllm:prefix_cache_hits_total"), dtWindow);
    const queries = Prom.rate(Prom.sum(old.samples, "vllm:prefix_cache_queries_total"), s("vllm:prefix_cache_queries_total"), dtWindow);
    const kv = s("vllm:kv_cache_usage_perc") * 100;
    tile("running", "Running", s("vllm:num_requests_running"), String(s("vllm:num_requests_running")));
    tile("waiting", "Waiting", s("vllm:num_requests_waiting"), String(s("vllm:num_requests_waiting")));
    tile("kv", "KV-cache usage", kv, fmtNumber(kv, 1) + " %");
    tile("prompt-tps", "Prompt tok/s", promptTps, fmtNumber(promptTps, 1));
    tile("gen-tps", "Generation tok/s", genTps, fmtNumber(genTps, 1));
    tile("prompt-tokens", "Prompt tokens (total)", s("vllm:prompt_tokens_total"), String(s("vllm:prompt_tokens_total")));
    tile("generation-tokens", "Generation tokens (total)", s("vllm:generation_tokens_total"), String(s("vllm:generation_tokens_total")));
    tile("preemptions", "Preemptions (total)", s("vllm:num_preemptions_total"), String(s("vllm:num_preemptions_total")));
    const hitRate = queries > 0 ? (hits / queries) * 100 : NaN;
    tile("prefix-hit", "Prefix-cache hit rate", hitRate, fmtNumber(hitRate, 1) + " %");
    push("running", s("vllm:num_requests_running"));
    push("waiting", s("vllm:num_requests_waiting"));
    push("promptTps", promptTps);
    push("genTps", genTps);
    push("kv", kv);
  }

  function draw() {
    const cur = scrapes[scrapes.length - 1];
    const prev = scrapes[Math.max(0, scrapes.length - 2)];
    const old = scrapes[0];
    counters(prev, cur, old, cur.t - old.t);
    const finished = reasons(cur);
    tile("requests", "Finished requests (total)", finished, String(finished));
    latency(old, cur, cur.t - old.t);
    config(cur);
    chart("chart-sched", ["running", "waiting"]);
    chart("chart-tokens", ["promptTps", "genTps"]);
    chart("chart-kv", ["kv"]);
  }

  async function poll() {
    try {
      const res = await App.api("/metrics");
      if (!res.ok) throw new Error(res.status + " " + res.statusText);
      const samples = Prom.parse(await res.text());
      scrapes.push({ t: performance.now() / 1000, samples: samples });
      while (scrapes.length > 1 && scrapes[scrapes.length - 1].t - scrapes[0].t > WINDOW_S) scrapes.shift();
      draw();
      $("dash-status").dataset.scrapes = String(Number($("dash-status").dataset.scrapes || 0) + 1);
      $("dash-status").classList.remove("error");
    } catch (e) {
      $("dash-status").textContent = "GET /metrics failed: " + e.message;
      $("dash-status").classList.add("error");
    }
    setTimeout(poll, POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("window").textContent = String(WINDOW_S);
    poll();
  });
})();
