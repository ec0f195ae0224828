// app.js: what the two views share: the API key, authenticated fetches,
// the error banner, the tabs (arrow keys move between them, as the ARIA
// tabs pattern asks) and the server version.
"use strict";

const App = (function () {
  const $ = (id) => document.getElementById(id);
  const keyName = "govllm-api-key";
  let keyWaiters = [];

  function showError(msg) {
    const e = $("error");
    e.textContent = msg;
    e.hidden = !msg;
  }

  // askKey shows the key form; the promise resolves once a key is entered.
  function askKey() {
    const form = $("key-form");
    form.dataset.asked = String(Number(form.dataset.asked || 0) + 1);
    form.hidden = false;
    $("api-key").focus();
    return new Promise((resolve) => keyWaiters.push(resolve));
  }

  function onKey(ev) {
    ev.preventDefault();
    sessionStorage.setItem(keyName, $("api-key").value);
    $("api-key").value = "";
    $("key-form").hidden = true;
    const ws = keyWaiters;
    keyWaiters = [];
    ws.forEach((w) => w());
  }

  // api fetches a server path with the bearer key (when one was entered);
  // a 401 asks for the key and retries.
  async function api(path, opts) {
    for (;;) {
      const o = Object.assign({}, opts);
      o.headers = Object.assign({}, o.headers);
      const key = sessionStorage.getItem(keyName);
      if (key) o.headers["Authorization"] = "Bearer " + key;
      const res = await fetch(path, o);
      if (res.status !== 401) return res;
      await askKey();
    }
  }

  // errorText is the message of an OpenAI error body, else the status.
  async function errorText(res) {
    try {
      const j = await res.json();
      if (j.error && j.error.message) return j.error.message;
    } catch (e) {
      // not JSON: fall through to the status line
    }
    return res.status + " " + res.statusText;
  }

  function selectTab(tab) {
    for (const t of document.querySelectorAll('[role="tab"]')) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
    tab.focus();
    history.replaceState(null, "", "#" + tab.id.slice(4));
  }

  function initTabs() {
    const tabs = Array.from(document.querySelectorAll('[role="tab"]'));
    tabs.forEach((t, i) => {
      t.addEventListener("click", () => selectTab(t));
      t.addEventListener("keydown", (ev) => {
        const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
        if (to === undefined) return;
        ev.preventDefault();
        selectTab(tabs[(to + tabs.length) % tabs.length]);
      });
    });
    const start = $("tab-" + location.hash.slice(1));
    if (start) selectTab(start);
  }

  async function loadVersion() {
    const res = await fetch("/version");
    if (res.ok) $("version").textContent = "version " + (await res.json()).version;
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("key-form").addEventListener("submit", onKey);
    initTabs();
    loadVersion().catch((e) => showError("GET /version: " + e.message));
  });

  return { $, api, errorText, showError };
})();
