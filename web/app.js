// muster web: renders the core's views as the server streams them. Everything a child wrote is put on screen
// as text (textContent, text nodes), never parsed as markup, so a child cannot inject into the page.
import { renderMarkdown } from "/markdown.js";

const $ = (id) => document.getElementById(id);
const state = { tree: null, open: null, openJson: "", paneTimer: null, raw: false, result: null };
// The open child's live terminal: xterm.js, its fit add-on, the socket and what keeps its size.
let term = null;

// xterm.js writes <style> elements of its own; the page's CSP admits a style element only with this page
// load's nonce, so every one created here carries it.
{
  const nonce = document.querySelector('meta[name="style-nonce"]')?.content ?? "";
  const create = document.createElement.bind(document);
  document.createElement = (tag, options) => {
    const e = create(tag, options);
    if (String(tag).toLowerCase() === "style") e.nonce = nonce;
    return e;
  };
}

/** An element with attributes and children; a string child becomes a text node (escaped by the DOM). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    // Through the CSSOM: the page's CSP refuses inline style attributes.
    else if (k === "indent") e.style.marginLeft = `${v}rem`;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
  return e;
}

// The last 8 hex digits, as the CLI names a child (the first ones are a timestamp, shared by siblings).
const short = (id) => String(id).slice(-8);
const label = (c) => (c.name ? `${c.name}` : `${c.agent} ${short(c.id)}`);
const cost = (u) => (u && typeof u.cost === "number" ? `$${u.cost.toFixed(2)}` : "");

async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || `${r.status}`);
  return data;
}

function say(text, error) {
  const m = $("d-msg");
  m.textContent = text;
  m.className = error ? "msg error" : "msg";
}

/** Depth of each child under the primary, from the parent links of the views. */
function depths(children) {
  const byId = new Map(children.map((c) => [c.id, c]));
  const depth = (c, seen = 0) =>
    c.parent && byId.has(c.parent) && seen < 32 ? 1 + depth(byId.get(c.parent), seen + 1) : 0;
  return new Map(children.map((c) => [c.id, depth(c)]));
}

/** Children in tree order: each followed by its own children. */
function treeOrder(children) {
  const kids = new Map();
  const ids = new Set(children.map((c) => c.id));
  for (const c of children) {
    const p = c.parent && ids.has(c.parent) ? c.parent : "";
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(c);
  }
  const out = [];
  const walk = (p) => {
    for (const c of kids.get(p) ?? []) {
      out.push(c);
      walk(c.id);
    }
  };
  walk("");
  return out;
}

/** Usage over the whole tree: what every child's turns cost and used. */
function totals(children) {
  let cost = 0;
  let tokens = 0;
  for (const c of children) {
    cost += c.usage?.cost ?? 0;
    tokens += (c.usage?.input ?? 0) + (c.usage?.output ?? 0);
  }
  const n = children.length;
  return `${n} ${n === 1 ? "child" : "children"} · $${cost.toFixed(2)} · ${tokens.toLocaleString("en")} tokens`;
}

function renderRuns(runs) {
  $("runs-pane").hidden = runs.length === 0;
  const items = [...runs].reverse().map((r) => {
    const done = r.steps.filter((s) => s.status === "completed").length;
    const steps = r.steps.map((s) =>
      el(
        "li",
        { class: "step" },
        s.childId
          ? el(
              "button",
              { type: "button", class: "link", "data-testid": "step", onclick: () => openChild(s.childId) },
              s.id,
            )
          : el("span", { "data-testid": "step" }, s.id),
        " ",
        el("span", { class: `state ${s.status}` }, s.status),
        s.reason ? el("span", { class: "muted" }, ` ${s.reason}`) : null,
      ),
    );
    return el(
      "li",
      { class: "run", "data-testid": "run", "data-id": r.runId },
      el(
        "div",
        { class: "top" },
        el("span", { class: "name" }, r.workflow),
        el("span", { class: `state ${r.status}`, "data-testid": "run-state" }, r.status),
        el("span", { class: "muted" }, `${done}/${r.steps.length} steps`),
      ),
      el("div", { class: "meta" }, `${short(r.runId)}${r.phase ? ` · ${r.phase}` : ""}`),
      el("ul", { class: "steps" }, ...steps),
    );
  });
  $("runs").replaceChildren(...items);
}

function renderTree() {
  const t = state.tree;
  $("primary").textContent = t.primary ? `primary ${short(t.primary)}` : "";
  $("totals").textContent = totals(t.children);
  renderRuns(t.runs ?? []);
  const d = depths(t.children);
  const items = treeOrder(t.children).map((c) => {
    const live = c.live?.state ?? c.status;
    const activity = c.live?.detail || c.lastActivity?.text || "";
    return el(
      "li",
      { indent: Math.min(d.get(c.id), 6) },
      el(
        "button",
        {
          type: "button",
          class: `child${state.open === c.id ? " selected" : ""}`,
          "data-testid": "child",
          "data-id": c.id,
          onclick: () => openChild(c.id),
        },
        el(
          "span",
          { class: "top" },
          el("span", { class: "name" }, label(c)),
          el("span", { class: `state ${live}`, "data-testid": "state" }, live),
          el("span", { class: "muted" }, cost(c.usage)),
        ),
        el("span", { class: "meta" }, `${short(c.id)} · ${c.agent} · ${c.place}`),
        activity ? el("div", { class: "activity" }, activity) : null,
      ),
    );
  });
  $("tree").replaceChildren(...items);
  $("empty").hidden = t.children.length > 0;
  renderRequests(t.requests);
  if (state.open) {
    const v = t.children.find((c) => c.id === state.open);
    const json = JSON.stringify(v ?? null);
    if (json !== state.openJson) {
      state.openJson = json;
      void loadDetail();
    }
  }
}

function renderRequests(requests) {
  $("inbox").hidden = requests.length === 0;
  const items = requests.map((r) => {
    const who = `${r.name ?? r.agent} ${short(r.child)}${r.lineage.length > 1 ? ` (via ${r.lineage.slice(0, -1).map(short).join(" › ")})` : ""}`;
    const answer = async (text, type) => {
      try {
        await api("POST", `/api/requests/${encodeURIComponent(r.id)}/answer`, { text, type });
      } catch (e) {
        alertLine(li, e.message);
      }
    };
    const controls =
      r.type === "permission"
        ? el(
            "div",
            { class: "row" },
            el(
              "button",
              { type: "button", "data-testid": "allow", onclick: () => answer("allow", "permission") },
              "Allow",
            ),
            el(
              "button",
              { type: "button", onclick: () => answer("allow_always", "permission") },
              "Allow always",
            ),
            el(
              "button",
              {
                type: "button",
                class: "danger",
                "data-testid": "deny",
                onclick: () => answer("deny", "permission"),
              },
              "Deny",
            ),
          )
        : questionControls(r, answer);
    const li = el(
      "li",
      { class: "request", "data-testid": "request", "data-id": r.id },
      el("div", { class: "who" }, `${r.type === "permission" ? "permission" : "question"} from ${who}`),
      el(
        "div",
        { class: "body" },
        r.type === "permission" ? `${r.tool ?? ""} ${r.summary ?? r.text}` : r.text,
      ),
      controls,
    );
    return li;
  });
  $("requests").replaceChildren(...items);
}

function questionControls(r, answer) {
  const input = el("input", { type: "text", placeholder: "Your answer", "data-testid": "answer-text" });
  const form = el(
    "form",
    {
      class: "row",
      onsubmit: (ev) => {
        ev.preventDefault();
        if (input.value.trim()) void answer(input.value);
      },
    },
    input,
    el("button", { type: "submit", "data-testid": "answer" }, "Answer"),
  );
  if (r.choices?.length)
    form.prepend(...r.choices.map((c) => el("button", { type: "button", onclick: () => answer(c) }, c)));
  return form;
}

function alertLine(li, text) {
  li.append(el("div", { class: "msg error" }, text));
}

function fact(dl, k, v) {
  if (v === undefined || v === null || v === "") return;
  dl.append(el("dt", {}, k), el("dd", {}, v));
}

async function loadDetail() {
  const id = state.open;
  let d;
  try {
    d = await api("GET", `/api/children/${encodeURIComponent(id)}`);
  } catch (e) {
    say(e.message, true);
    return;
  }
  if (state.open !== id) return;
  $("d-title").textContent = label(d);
  const dl = $("d-facts");
  dl.replaceChildren();
  fact(dl, "id", d.id);
  fact(dl, "agent", d.model ? `${d.agent} (${d.model})` : d.agent);
  fact(dl, "place", d.place);
  fact(dl, "status", d.status);
  fact(dl, "state", d.live ? `${d.live.state}${d.live.detail ? `: ${d.live.detail}` : ""}` : "");
  fact(dl, "cost", cost(d.usage));
  fact(dl, "cwd", d.cwd);
  fact(dl, "attach", d.attach);
  $("d-turns").replaceChildren(
    ...d.turns.map((t) =>
      el(
        "li",
        { "data-testid": "turn" },
        `#${t.n} ${t.status}${t.durationMs !== undefined ? ` · ${(t.durationMs / 1000).toFixed(1)}s` : ""}${t.model ? ` · ${t.model}` : ""}${t.reason ? ` · ${t.reason}` : ""}`,
      ),
    ),
  );
  state.result = d.result ? d.result.text + (d.result.truncated ? "\n… (truncated)" : "") : null;
  showResult();
  // A child whose host has ended takes no follow-up here and has nothing left to cancel.
  const ended = d.status === "closed" || d.status === "lost" || d.status === "unreadable";
  $("send-text").disabled = ended;
  $("send").disabled = ended;
  $("cancel").disabled = ended;
  retryTerminal(d);
}

/** The answer as Markdown built from DOM nodes (never parsed as HTML), or as its exact text. */
function showResult() {
  const box = $("d-result");
  box.classList.toggle("raw", state.raw);
  $("raw").textContent = state.raw ? "Show rendered" : "Show raw";
  if (state.result === null) box.textContent = "(none yet)";
  else if (state.raw) box.textContent = state.result;
  else box.replaceChildren(renderMarkdown(state.result));
}

/** A worktree child's work against the HEAD it started from; nothing shown for other children. */
async function loadDiff() {
  const id = state.open;
  let d;
  try {
    d = await api("GET", `/api/children/${encodeURIComponent(id)}/diff`);
  } catch {
    if (state.open === id) $("diff-pane").hidden = true;
    return;
  }
  if (state.open !== id) return;
  $("diff-pane").hidden = false;
  $("d-diff-base").textContent =
    `${d.branch} against ${String(d.base).slice(0, 12)}${d.problem ? ` (${d.problem})` : ""}`;
  const lines = (d.diff || "(no changes)").split("\n").map((l) => {
    const kind =
      l.startsWith("+") && !l.startsWith("+++")
        ? "add"
        : l.startsWith("-") && !l.startsWith("---")
          ? "del"
          : l.startsWith("@@")
            ? "hunk"
            : "";
    return el("span", { class: kind }, `${l}\n`);
  });
  $("d-diff").replaceChildren(...lines);
}

function termState(text, error) {
  const t = $("term-state");
  t.textContent = text;
  t.className = error ? "msg error" : "muted";
}

/**
 * The child's pane as a live terminal: a WebSocket to the server, which runs a viewer of the pane in a
 * pseudo-terminal of this size. Read-only unless "Take input" is on (then keys go to the child).
 */
function openTerminal(id) {
  closeTerminal();
  if (!window.Terminal || !window.FitAddon) return snapshots("the terminal script did not load");
  const input = $("take-input").checked;
  const xt = new window.Terminal({
    fontSize: 13,
    scrollback: 2000,
    disableStdin: !input,
    cursorBlink: input,
  });
  const fit = new window.FitAddon.FitAddon();
  xt.loadAddon(fit);
  $("d-term").hidden = false;
  $("d-pane").hidden = true;
  xt.open($("d-term"));
  fit.fit();
  const q = new URLSearchParams({ cols: String(xt.cols), rows: String(xt.rows), input: input ? "1" : "0" });
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(
    `${scheme}://${location.host}/api/children/${encodeURIComponent(id)}/terminal?${q}`,
  );
  ws.binaryType = "arraybuffer";
  const mine = { id, xt, fit, ws, resize: null, failed: false };
  term = mine;
  termState("connecting…");
  ws.onopen = () => termState(input ? "live · your keys go to the child" : "live · read-only");
  ws.onmessage = (ev) => {
    if (typeof ev.data !== "string") return xt.write(new Uint8Array(ev.data));
    const m = JSON.parse(ev.data);
    if (m.type === "error") {
      mine.failed = true;
      if (/no live terminal here/.test(m.message)) snapshots(m.message);
      else termState(m.message, true);
    } else if (m.type === "exit") termState("the pane's viewer ended");
  };
  ws.onclose = () => {
    if (term === mine && !mine.failed && $("term-state").textContent.startsWith("live"))
      termState("disconnected");
  };
  xt.onData((d) => {
    if (input && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "input", data: d }));
  });
  xt.onResize(({ cols, rows }) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "resize", cols, rows }));
  });
  mine.resize = new ResizeObserver(() => fit.fit());
  mine.resize.observe($("d-term"));
  if (input) xt.focus();
}

function closeTerminal() {
  clearInterval(state.paneTimer);
  if (!term) return;
  const t = term;
  term = null;
  t.resize?.disconnect();
  t.ws.onclose = null;
  t.ws.close();
  t.xt.dispose();
  $("d-term").replaceChildren();
}

/** Where no live terminal can run: the pane's text, captured every 2 s while the child is open. */
function snapshots(why) {
  closeTerminal();
  $("d-term").hidden = true;
  $("d-pane").hidden = false;
  termState(`snapshots (${why})`);
  clearInterval(state.paneTimer);
  state.paneTimer = setInterval(loadPane, 2000);
  void loadPane();
}

/** A terminal that could not open (no pane yet) is tried again when the child's view changes. */
function retryTerminal(d) {
  const ended = d.status === "closed" || d.status === "lost" || d.status === "unreadable";
  if (term && term.id === d.id && term.failed && !ended && d.attach) openTerminal(d.id);
}

async function loadPane() {
  const id = state.open;
  if (!id) return;
  try {
    const p = await api("GET", `/api/children/${encodeURIComponent(id)}/pane`);
    if (state.open === id) $("d-pane").textContent = p.text;
  } catch (e) {
    if (state.open === id) $("d-pane").textContent = `(no pane: ${e.message})`;
  }
}

function openChild(id) {
  state.open = id;
  state.openJson = "";
  document.body.classList.add("open");
  $("detail-pane").hidden = false;
  $("cancel-confirm").hidden = true;
  $("d-pane").textContent = "";
  $("d-result").textContent = "";
  say("");
  $("diff-pane").hidden = true;
  $("d-diff").textContent = "";
  void loadDiff();
  // Each child opens read-only: typing into one is a choice made for that child.
  $("take-input").checked = false;
  openTerminal(id);
  if (state.tree) renderTree();
  else void loadDetail();
}

function closeChild() {
  state.open = null;
  closeTerminal();
  document.body.classList.remove("open");
  $("detail-pane").hidden = true;
  if (state.tree) renderTree();
}

function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("tree", (ev) => {
    state.tree = JSON.parse(ev.data);
    $("conn").textContent = "live";
    $("conn").className = "conn live";
    renderTree();
  });
  es.onerror = () => {
    $("conn").textContent = "reconnecting…";
    $("conn").className = "conn";
  };
}

document.addEventListener("DOMContentLoaded", () => {
  $("back").addEventListener("click", closeChild);
  $("raw").addEventListener("click", () => {
    state.raw = !state.raw;
    showResult();
  });
  $("diff-refresh").addEventListener("click", () => void loadDiff());
  $("take-input").addEventListener("change", () => {
    if (state.open) openTerminal(state.open);
  });
  $("send-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("send-text").value;
    if (!text.trim() || !state.open) return;
    try {
      const r = await api("POST", `/api/children/${encodeURIComponent(state.open)}/send`, { prompt: text });
      $("send-text").value = "";
      say(`sent (turn ${short(r.turnId ?? "")})`);
    } catch (e) {
      say(e.message, true);
    }
  });
  $("cancel").addEventListener("click", () => {
    $("cancel-confirm").hidden = false;
  });
  $("cancel-no").addEventListener("click", () => {
    $("cancel-confirm").hidden = true;
  });
  $("cancel-yes").addEventListener("click", async () => {
    $("cancel-confirm").hidden = true;
    try {
      await api("POST", `/api/children/${encodeURIComponent(state.open)}/cancel`, {});
      say("cancelled");
    } catch (e) {
      say(e.message, true);
    }
  });
  connect();
});
