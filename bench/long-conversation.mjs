#!/usr/bin/env node
// "A long-lived child": `muster send` (queue a follow-up) and `muster send --wait` (its whole round trip) on a
// mock child whose conversation holds ~6 MB (60 turns of ~100 KB answers), and `muster status` on one whose
// event log holds ~3 MB (70 turns of 100 tool calls), each against a child just spawned, in alternating runs;
// the row is the ratio of the medians. None should grow with the child's history. Part of `npm run bench`; run
// alone: `node bench/long-conversation.mjs [runs]` (after a build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { EventLog } from "../dist/artifacts/log.js";
import { appendSession, sessionFileOf } from "../dist/sessions/store.js";
import { benchEnv } from "./env.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.join(import.meta.dirname, "..", "bin", "muster.js");
const TURNS = 60;
const ANSWER_BYTES = 100_000;

function run(args, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd, encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`muster ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** ~TURNS × ANSWER_BYTES of completed turns appended as the host writes them (the child is idle meanwhile). */
function grow(file) {
  const lines = [];
  for (let i = 0; i < TURNS; i++) {
    const turnId = `filler-${i}`;
    const ts = new Date().toISOString();
    lines.push(
      { type: "message", role: "user", text: `question ${i}`, ts, metadata: { turnId, source: "inbox" } },
      {
        type: "message",
        role: "assistant",
        text: `answer ${i} ${"z".repeat(ANSWER_BYTES)}`,
        ts,
        metadata: { turnId, status: "completed" },
      },
    );
  }
  appendSession(file, lines);
}

/** ~70 turns of 100 tool calls each (~3 MB) appended to an idle child's event log, as its host writes them. */
function growLog(artifactDir) {
  const log = EventLog.open(path.join(artifactDir, "events.ndjson"));
  for (let i = 0; i < 70; i++) {
    const turnId = `01a20000-0000-7000-8000-${String(i).padStart(12, "0")}`;
    log.append({
      type: "turn_started",
      turnId,
      source: "inbox",
      promptBytes: 10,
      promptSha256: "0".repeat(64),
      promptPath: `prompts/${turnId}.txt`,
    });
    for (let t = 0; t < 100; t++) {
      log.append({
        type: "tool_activity",
        turnId,
        phase: "start",
        name: "Bash",
        summary: `step ${t} ${"s".repeat(120)}`,
      });
      log.append({
        type: "tool_activity",
        turnId,
        phase: "end",
        name: "Bash",
        summary: `step ${t}`,
        ok: true,
      });
    }
    log.append({ type: "usage", turnId, usage: { input: 100, output: 10 } });
    log.append({ type: "completion", turnId, status: "completed", text: `answer ${i}` });
  }
  log.close();
}

export function longConversation(given, base, runs) {
  const env = { ...given };
  delete env.NODE_EXTRA_CA_CERTS;
  const cwd = path.join(base, "long-conversation");
  fs.mkdirSync(cwd, { recursive: true });
  const spawned = () =>
    JSON.parse(run(["spawn", "--wait", "--json", "mock: reply=ok"], env, cwd).stdout).results[0];
  const long = spawned();
  const fresh = spawned();
  const file = sessionFileOf(long.artifactDir);
  grow(file);
  const bytes = fs.statSync(file).size;
  const logged = spawned();
  growLog(logged.artifactDir);
  const logBytes = fs.statSync(path.join(logged.artifactDir, "events.ndjson")).size;
  const times = {
    send: { long: [], fresh: [] },
    followUp: { long: [], fresh: [] },
    status: { long: [], fresh: [] },
  };
  for (let i = 0; i < runs; i++) {
    for (const [which, c] of i % 2
      ? [
          ["long", long],
          ["fresh", fresh],
        ]
      : [
          ["fresh", fresh],
          ["long", long],
        ]) {
      times.followUp[which].push(run(["send", "--wait", c.id, "mock: reply=ok"], env, cwd).ms);
      times.send[which].push(run(["send", c.id, "mock: reply=ok"], env, cwd).ms);
      run(["wait", c.id], env, cwd);
    }
    for (const [which, c] of i % 2
      ? [
          ["long", logged],
          ["fresh", fresh],
        ]
      : [
          ["fresh", fresh],
          ["long", logged],
        ])
      times.status[which].push(run(["status", c.id], env, cwd).ms);
  }
  spawnSync(process.execPath, [BIN, "rm", "--force", long.id, fresh.id, logged.id], {
    env,
    cwd,
    stdio: "ignore",
  });
  const out = { runs, conversationBytes: bytes, logBytes };
  for (const [name, t] of Object.entries(times)) {
    const l = pct(t.long, 50);
    const f = pct(t.fresh, 50);
    out[name] = { longMs: round(l), freshMs: round(f), ratio: round(l / f, 2) };
  }
  return { ...out, target: { ratio: 1.2 } };
}

export const longConversationRow = (r) => [
  `a long-lived child ÷ a new one (median): send, send --wait (${Math.round(r.conversationBytes / 1e6)} MB conversation) · status (${Math.round(r.logBytes / 1e6)} MB event log)`,
  `${r.send.ratio}× (${r.send.longMs} vs ${r.send.freshMs} ms), ${r.followUp.ratio}× (${r.followUp.longMs} vs ${r.followUp.freshMs} ms) · ${r.status.ratio}× (${r.status.longMs} vs ${r.status.freshMs} ms)`,
  "≤ 1.2×",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-longconv-"));
  const socket = `mbl-${process.pid}`;
  try {
    const r = longConversation(benchEnv(base, socket), base, Number(process.argv[2] ?? 11));
    const [name, result, target] = longConversationRow(r);
    console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
