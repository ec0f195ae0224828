// chat.js: the chat playground. It streams /v1/chat/completions over SSE
// (fetch and a ReadableStream), stops a reply with an AbortController (the
// server sees the connection close and aborts the request), and measures
// each reply in the page: time to first token and decode tok/s.
"use strict";

(function () {
  const $ = App.$;
  const history = []; // the conversation sent with each request
  let controller = null; // the running request's AbortController

  async function loadModels() {
    const res = await App.api("/v1/models");
    if (!res.ok) throw new Error(await App.errorText(res));
    const sel = $("model");
    sel.replaceChildren();
    for (const m of (await res.json()).data) sel.append(new Option(m.id, m.id));
  }

  // numberField is an input's number, or undefined when it is empty.
  function numberField(id) {
    const v = $(id).value.trim();
    return v === "" ? undefined : Number(v);
  }

  // jsonField is a textarea's JSON, or undefined when it is empty.
  function jsonField(id) {
    const v = $(id).value.trim();
    if (v === "") return undefined;
    try {
      return JSON.parse(v);
    } catch (e) {
      throw new Error($(id).labels[0].textContent + ": " + e.message);
    }
  }

  function requestBody() {
    const messages = [];
    const sys = $("system").value.trim();
    if (sys) messages.push({ role: "system", content: sys });
    const body = {
      model: $("model").value,
      messages: messages.concat(history),
      stream: true,
      stream_options: { include_usage: true },
    };
    for (const f of ["temperature", "top_p", "max_tokens", "seed"]) {
      const v = numberField(f);
      if (v !== undefined) body[f] = v;
    }
    for (const f of ["tools", "response_format"]) {
      const v = jsonField(f);
      if (v !== undefined) body[f] = v;
    }
    if ($("tool_choice").value) body.tool_choice = $("tool_choice").value;
    if ($("parallel_tool_calls").value) body.parallel_tool_calls = $("parallel_tool_calls").value === "true";
    const extra = jsonField("extra");
    if (extra !== undefined && (extra === null || typeof extra !== "object" || Array.isArray(extra))) {
      throw new Error($("extra").labels[0].textContent + ": not a JSON object");
    }
    return Object.assign(body, extra);
  }

  // bubble appends a transcript entry and returns its parts.
  function bubble(role, text) {
    const li = document.createElement("li");
    li.className = "msg " + role;
    li.innerHTML = '<div class="role"></div><details class="reasoning" hidden><summary>Reasoning</summary><pre></pre></details>' +
      '<div class="content"></div><pre class="tool-calls" hidden></pre><p class="stats"></p>';
    li.querySelector(".role").textContent = role;
    li.querySelector(".content").textContent = text;
    $("transcript").append(li);
    li.scrollIntoView({ block: "end" });
    return {
      li: li,
      reasoning: li.querySelector(".reasoning"),
      content: li.querySelector(".content"),
      tools: li.querySelector(".tool-calls"),
      stats: li.querySelector(".stats"),
    };
  }

  // readSSE calls onData with each event's parsed JSON until [DONE].
  async function readSSE(res, onData) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data:")) continue;
          const data = line.slice(5).trim();
          if (data === "[DONE]") return;
          onData(JSON.parse(data));
        }
      }
    }
  }

  // Reply accumulates one streamed answer and its measurements.
  function Reply(parts) {
    this.parts = parts;
    this.text = "";
    this.reasoning = "";
    this.calls = [];
    this.chunks = 0;
    this.t0 = performance.now();
    this.tFirst = 0;
    this.usage = null;
    this.finish = "";
  }

  Reply.prototype.onData = function (chunk) {
    if (chunk.error) throw new Error(chunk.error.message);
    if (chunk.usage) this.usage = chunk.usage;
    for (const c of chunk.choices || []) {
      const d = c.delta || {};
      if (d.content || d.reasoning_content || d.tool_calls) {
        if (!this.tFirst) this.tFirst = performance.now();
        this.chunks++;
      }
      if (d.content) this.text += d.content;
      if (d.reasoning_content) this.reasoning += d.reasoning_content;
      for (const tc of d.tool_calls || []) this.addCall(tc);
      if (c.finish_reason) this.finish = c.finish_reason;
    }
    this.render();
  };

  Reply.prototype.addCall = function (tc) {
    const call = this.calls[tc.index] || (this.calls[tc.index] = { id: "", type: "function", function: { name: "", arguments: "" } });
    if (tc.id) call.id = tc.id;
    if (tc.function && tc.function.name) call.function.name += tc.function.name;
    if (tc.function && tc.function.arguments) call.function.arguments += tc.function.arguments;
  };

  Reply.prototype.render = function () {
    const p = this.parts;
    p.content.textContent = this.text;
    p.reasoning.hidden = this.reasoning === "";
    p.reasoning.querySelector("pre").textContent = this.reasoning;
    p.tools.hidden = this.calls.length === 0;
    p.tools.textContent = this.calls.length ? "tool calls: " + JSON.stringify(this.calls, null, 2) : "";
  };

  // finishStats writes the reply's usage and timings under it.
  Reply.prototype.finishStats = function (state) {
    const tEnd = performance.now();
    const st = this.parts.stats;
    const tokens = this.usage ? this.usage.completion_tokens : this.chunks;
    const ttft = this.tFirst ? this.tFirst - this.t0 : NaN;
    // Decode speed: the tokens after the first over the time after it.
    const tps = this.tFirst && tokens > 1 ? (tokens - 1) / ((tEnd - this.tFirst) / 1000) : NaN;
    const bits = [];
    if (this.usage) bits.push(`${this.usage.prompt_tokens} prompt + ${this.usage.completion_tokens} completion tokens`);
    else bits.push(`${this.chunks} chunks (no usage: the request was ${state})`);
    if (!Number.isNaN(ttft)) bits.push(`TTFT ${ttft.toFixed(0)} ms`);
    if (!Number.isNaN(tps)) bits.push(`${tps.toFixed(1)} tok/s`);
    bits.push(state === "done" ? `finish: ${this.finish}` : state);
    st.textContent = bits.join(" · ");
    this.parts.li.dataset.state = state;
    this.parts.li.dataset.completionTokens = String(tokens);
  };

  function setBusy(busy) {
    $("send").disabled = busy;
    $("stop").disabled = !busy;
  }

  async function send(ev) {
    ev.preventDefault();
    const text = $("prompt").value.trim();
    if (!text || controller) return;
    App.showError("");
    let body;
    try {
      history.push({ role: "user", content: text });
      body = requestBody();
    } catch (e) {
      history.pop();
      App.showError(e.message);
      return;
    }
    $("prompt").value = "";
    bubble("user", text);
    await stream(body, new Reply(bubble("assistant", "")));
  }

  async function stream(body, reply) {
    controller = new AbortController();
    setBusy(true);
    reply.parts.li.dataset.state = "streaming";
    $("transcript").setAttribute("aria-busy", "true"); // read the reply once, when complete
    let state = "done";
    try {
      const res = await App.api("/v1/chat/completions", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!res.ok) throw new Error(await App.errorText(res));
      await readSSE(res, (chunk) => reply.onData(chunk));
    } catch (e) {
      state = e.name === "AbortError" ? "stopped" : "error";
      if (state === "error") App.showError(e.message);
    }
    if (reply.text) history.push({ role: "assistant", content: reply.text });
    reply.finishStats(state);
    $("transcript").setAttribute("aria-busy", "false");
    controller = null;
    setBusy(false);
  }

  function onPromptKey(ev) {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      $("composer").requestSubmit();
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("composer").addEventListener("submit", send);
    $("prompt").addEventListener("keydown", onPromptKey);
    $("stop").addEventListener("click", () => controller && controller.abort());
    $("settings").addEventListener("submit", (ev) => ev.preventDefault());
    $("clear").addEventListener("click", () => {
      history.length = 0;
      $("transcript").replaceChildren();
    });
    loadModels().catch((e) => App.showError("GET /v1/models: " + e.message));
  });
})();
