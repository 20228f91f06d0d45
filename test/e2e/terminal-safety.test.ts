import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO, useSandbox } from "../helpers/cli.js";
import { runOnTty } from "../helpers/tty.js";

const sb = useSandbox("mt-esc");
const AGENT = path.join(REPO, "test/fixtures/explicit-agent.mjs");

// A clipboard write (OSC 52), a window title (OSC 0), a screen clear and an 8-bit CSI (U+009B).
const PROGRESS = "working \x1b]52;c;aGlqYWNrZWQ=\x07 \x1b]0;progress-title\x07 \x1b[2J on it";
const ERROR = "failed \x1b]0;pwned\x07 \x1b[2J \x1b]52;c;c2VjcmV0\x1b\\ \u009b2J done";
const ANSWER = "the answer \x1b]0;answer-title\x07\x1b[2J\x1b]52;c;YW5zd2Vy\x07 end\n";

/** No byte that starts an escape (ESC, BEL, C1 in UTF-8) — ignoring muster's own status-line clear on a tty. */
function assertInert(bytes: Buffer | string): void {
  const text = Buffer.isBuffer(bytes) ? bytes.toString("utf8") : bytes;
  const own = text.replaceAll("\r\x1b[2K", "");
  expect(own).not.toMatch(/[\x1b\x07\u0080-\u009f]/);
}

describe("text a child supplied never drives the user's terminal", () => {
  let hostile: string;
  let answering: string;

  beforeAll(async () => {
    const run = await sb.run([
      "spawn",
      "--agent",
      "command",
      "--wait",
      "--json",
      "task",
      "--",
      process.execPath,
      AGENT,
      BIN,
      PROGRESS,
      "error",
      ERROR,
    ]);
    const spawned = { exitCode: run.exitCode, data: JSON.parse(run.stdout) };
    expect(spawned.exitCode).toBe(1);
    // --json carries the original text, escaped by JSON.
    expect(spawned.data.results[0].reason).toBe(ERROR);
    hostile = spawned.data.spawned.id;
    const reply = await sb.json(["spawn", "--wait", `answer\nmock: reply=${encodeURIComponent(ANSWER)}`]);
    expect(reply.data.results[0].text).toBe(ANSWER);
    answering = reply.data.spawned.id;
  });

  it("ls, status, wait and result show escapes visibly when piped", async () => {
    for (const args of [["ls"], ["status", hostile], ["wait", hostile], ["result", hostile]]) {
      const r = await sb.run(args);
      assertInert(args[0] === "ls" || args[0] === "status" ? r.stdout : r.stderr);
      assertInert(r.stderr);
    }
    // capture prints what tmux rendered (no -e): text, never the escapes that drew it.
    const capture = await sb.run(["capture", hostile]);
    expect(capture.exitCode).toBe(0);
    assertInert(capture.stdout);
    const status = await sb.run(["status", hostile]);
    expect(status.stdout).toContain("failed ␛]0;pwned␇ ␛[2J ␛]52;c;c2VjcmV0␛\\ <U+009B>2J done");
    const ls = await sb.run(["ls"]);
    expect(ls.stdout).toContain("␛]0;pwned␇");
    // The JSON documents keep the original text; C1 controls are \u-escaped too.
    const json = await sb.run(["status", hostile, "--json"]);
    expect(json.stdout).not.toMatch(/[\x1b\x07\u0080-\u009f]/);
    expect(JSON.parse(json.stdout).turnList[0].reason).toBe(ERROR);
    expect(JSON.parse((await sb.run(["ls", "--json"])).stdout).children[0].lastActivity.text).toContain(
      "\x1b]0;pwned\x07",
    );
  });

  it("agents: a profile file's description and body are shown, not obeyed", async () => {
    const dir = path.join(sb.cwd, ".muster", "agents");
    fs.mkdirSync(dir, { recursive: true });
    // YAML's double-quoted \e and \a put raw ESC and BEL in the description; the body holds them raw.
    fs.writeFileSync(
      path.join(dir, "sly.md"),
      '---\ndescription: "looks fine \\e]0;profile-title\\a \\e[2J"\nrunner: mock\n---\nBody \x1b]52;c;Ym9keQ==\x07 text\n',
    );
    const list = await sb.run(["agents"]);
    expect(list.stdout).toContain("looks fine ␛]0;profile-title␇ ␛[2J");
    const one = await sb.run(["agents", "sly"]);
    expect(one.stdout).toContain("Body ␛]52;c;Ym9keQ==␇ text");
    for (const out of [list.stdout, list.stderr, one.stdout, one.stderr]) assertInert(out);
  });

  it("on a terminal: ls, status, wait and result print nothing the terminal would obey", async () => {
    for (const args of [
      ["ls"],
      ["status", hostile],
      ["wait", hostile],
      ["result", hostile],
      ["result", answering],
    ]) {
      const r = await runOnTty(sb, args);
      assertInert(r.raw);
      expect(r.raw.toString("utf8")).toContain("␛");
    }
  });

  it("result: the exact bytes into a pipe, visible on a terminal, raw on a terminal with --raw", async () => {
    const piped = await sb.run(["result", answering]);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).toBe(ANSWER);
    const tty = await runOnTty(sb, ["result", answering]);
    expect(tty.exitCode).toBe(0);
    expect(tty.raw.toString("utf8")).toContain("the answer ␛]0;answer-title␇␛[2J␛]52;c;YW5zd2Vy␇ end");
    const raw = await runOnTty(sb, ["result", answering, "--raw"]);
    expect(raw.exitCode).toBe(0);
    expect(raw.raw.toString("utf8")).toContain(ANSWER.replace("\n", "\r\n"));
  });
});
