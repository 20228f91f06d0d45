import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendFork, isFork, MAX_FORK_BYTES } from "../../src/sessions/fork.js";
import { seedSession } from "../../src/sessions/seed.js";
import {
  appendSession,
  isResumable,
  isResumableFile,
  lastRunnerSession,
  lastRunnerSessionOf,
  lastSettings,
  lastSettingsOf,
  listSessions,
  loadSession,
  manifestOf,
  sessionAsOfNow,
  sessionFileOf,
  transcript,
} from "../../src/sessions/store.js";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-sessions-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const ID = "01a22900-0000-7000-8000-0000000000aa";
const P = "01a22900-0000-7000-8000-0000000000bb";
const seed = (file: string) =>
  seedSession(file, {
    id: ID,
    primary: P,
    parent: null,
    agent: "reviewer",
    runner: "mock",
    cwd: "/w",
    createdAt: "2026-01-01T00:00:00.000Z",
    systemPrompt: "Review.",
  });
const user = (turnId: string, text: string, md: Record<string, string> = {}) =>
  ({ type: "message", role: "user", text, ts: "t", metadata: { turnId, source: "inbox", ...md } }) as const;
const assistant = (turnId: string, text: string, status: string, md: Record<string, string> = {}) =>
  ({ type: "message", role: "assistant", text, ts: "t", metadata: { turnId, status, ...md } }) as const;

describe("conversation files", () => {
  it("the header, manifest and messages round-trip; the file is named by the child id, mode 0600", () => {
    const root = tmp();
    const file = sessionFileOf(path.join(root, "primaries", P, "artifacts", ID));
    expect(file).toBe(path.join(root, "primaries", P, "subagents", `${ID}.jsonl`));
    seed(file);
    appendSession(file, [
      user("t1", "first", { model: "mock:deep", reasoning: "high" }),
      assistant("t1", "answer 1", "completed", { runnerSessionId: "s1" }),
    ]);
    const s = loadSession(file);
    expect(s.header).toMatchObject({ type: "session", version: 1, id: ID, primary: P, parent: null });
    expect(manifestOf(s)).toEqual({ primary: P, parent: null, agent: "reviewer", runner: "mock" });
    expect(lastSettings(s)).toEqual({ model: "mock:deep", reasoning: "high" });
    expect(lastRunnerSession(s)).toBe("s1");
    expect(isResumable(s)).toBe(true);
    expect(transcript(s)).toBe("User:\nfirst\n\nAssistant:\nanswer 1");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it("a first turn that failed leaves the child not resumable, and failed answers stay out of transcripts", () => {
    const file = path.join(tmp(), "subagents", `${ID}.jsonl`);
    seed(file);
    appendSession(file, [user("t1", "first"), assistant("t1", "boom", "errored")]);
    const s = loadSession(file);
    expect(isResumable(s)).toBe(false);
    expect(transcript(s)).toBe("User:\nfirst");
  });

  it("a torn last line (writer killed mid-append) is skipped, and the next append starts clean", () => {
    const file = path.join(tmp(), "subagents", `${ID}.jsonl`);
    seed(file);
    fs.appendFileSync(file, '{"type":"message","role":"user","te');
    expect(loadSession(file).messages).toHaveLength(3);
    appendSession(file, [user("t2", "after the tear")]);
    const s = loadSession(file);
    expect(s.messages.at(-1)).toMatchObject({ role: "user", text: "after the tear" });
    expect(s.skipped).toBe(1);
  });

  it("only direct <id>.jsonl files are listed: nested files never show", () => {
    const dir = path.join(tmp(), "subagents");
    fs.mkdirSync(path.join(dir, "nested", "deeper"), { recursive: true });
    fs.writeFileSync(path.join(dir, `${ID}.jsonl`), "");
    fs.writeFileSync(path.join(dir, "nested", "x.jsonl"), "");
    fs.writeFileSync(path.join(dir, "nested", "deeper", "y.jsonl"), "");
    fs.writeFileSync(path.join(dir, "notes.txt"), "");
    expect(listSessions(dir)).toEqual([ID]);
    expect(listSessions(path.join(tmp(), "missing"))).toEqual([]);
  });
});

describe("appendFork", () => {
  const turn = (n: number, text: string, status = "completed") => [
    {
      type: "message" as const,
      role: "user" as const,
      text: `task ${n}`,
      ts: "2026-01-01T00:00:01.000Z",
      metadata: { turnId: `t${n}`, source: "inbox" as const, model: "m1", runnerSessionId: "theirs" },
    },
    {
      type: "message" as const,
      role: "assistant" as const,
      text,
      ts: "2026-01-01T00:00:02.000Z",
      metadata: { turnId: `t${n}`, status, runnerSessionId: "theirs" },
    },
  ];

  it("carries tasks and completed answers, never the source's runner session or settings, newest first when over 1 MiB", () => {
    const dir = tmp();
    const src = path.join(dir, "src.jsonl");
    seed(src);
    // Two answers of over half the bound each (one record stays under the reader's 1 MiB line limit).
    const half = (c: string) => c.repeat(MAX_FORK_BYTES / 2 + 10);
    appendSession(src, [...turn(1, half("a")), ...turn(2, "failed half", "errored"), ...turn(3, half("c"))]);
    const dst = path.join(dir, "dst.jsonl");
    seed(dst);
    const copy = appendFork(dst, loadSession(src), ID, "2026-01-02T00:00:00.000Z");
    const fork = loadSession(dst);
    expect(isFork(fork)).toBe(true);
    expect(isFork(loadSession(src))).toBe(false);
    // The 1 MiB bound: the newest messages are kept; turn 1 (its task and answer) is left out.
    expect(copy).toEqual({ messages: 3, leftOut: 2 });
    const carried = fork.messages.filter((m) => m.role !== "system");
    expect(carried.map((m) => m.text.slice(0, 6))).toEqual(["task 2", "task 3", "cccccc"]);
    expect(lastRunnerSession(fork)).toBeUndefined();
    expect(lastSettings(fork)).toEqual({});
    expect(carried.every((m) => m.metadata.forkedFrom === ID)).toBe(true);
    const note = fork.messages.find((m) => m.role === "system" && m.kind === "fork");
    expect(note?.text).toContain("2 older messages left out");
    expect(transcript(fork)).toBe(`User:\ntask 2\n\nUser:\ntask 3\n\nAssistant:\n${half("c")}`);
  });
});

describe("loadSession", () => {
  it("reads back a user message of the longest prompt, even when JSON escaping makes its line 6× longer", () => {
    const file = path.join(tmp(), "s.jsonl");
    seed(file);
    // 1 MiB of a control character: each is six bytes in JSON (\u0001).
    const prompt = "\u0001".repeat(1024 * 1024);
    appendSession(file, [
      {
        type: "message",
        role: "user",
        text: prompt,
        ts: "2026-01-01T00:00:01.000Z",
        metadata: { turnId: "t1", source: "inbox", model: "big-turn-model" },
      },
    ]);
    const s = loadSession(file);
    expect(s.skipped).toBe(0);
    expect(s.messages.at(-1)?.text).toBe(prompt);
    expect(lastSettings(s)).toEqual({ model: "big-turn-model" });
  });
});

describe("a follow-up's defaults and history, however long the conversation", () => {
  it("lastSettingsOf, read from the file's end, agrees with lastSettings of the whole conversation", () => {
    const file = path.join(tmp(), "s.jsonl");
    expect(lastSettingsOf(file)).toEqual({});
    seed(file);
    expect(lastSettingsOf(file)).toEqual(lastSettings(loadSession(file)));
    appendSession(file, [
      user("t1", "first", { model: "mock:deep", reasoning: "high" }),
      assistant("t1", "a".repeat(300_000), "completed"),
      user("t2", "second", { model: "mock:fast" }),
      // An answer far longer than a read from the end takes at once: the user message is behind it.
      assistant("t2", "b".repeat(700_000), "completed"),
    ]);
    expect(lastSettingsOf(file)).toEqual({ model: "mock:fast" });
    expect(lastSettingsOf(file)).toEqual(lastSettings(loadSession(file)));
    // A torn last line and a malformed one are passed over, as loadSession passes over them.
    fs.appendFileSync(file, 'not json\n{"type":"message","role":"user","text":"torn');
    expect(lastSettingsOf(file)).toEqual({ model: "mock:fast" });
    expect(lastSettingsOf(file)).toEqual(lastSettings(loadSession(file)));
  });

  it("lastRunnerSessionOf, read from the file's end, agrees with lastRunnerSession (a resumed host's start)", () => {
    const file = path.join(tmp(), "s.jsonl");
    const agree = (want: string | undefined) => {
      expect(lastRunnerSessionOf(file)).toBe(want);
      expect(lastRunnerSession(loadSession(file))).toBe(want);
    };
    agree(undefined);
    seed(file);
    agree(undefined);
    appendSession(file, [
      user("t1", "first"),
      assistant("t1", "one", "completed", { runnerSessionId: "s1" }),
    ]);
    agree("s1");
    // The next request carries it on; a turn that reports none leaves the last one standing.
    appendSession(file, [
      user("t2", "second", { runnerSessionId: "s1" }),
      assistant("t2", "d".repeat(300_000), "errored"),
    ]);
    agree("s1");
    appendSession(file, [
      user("t3", "third", { runnerSessionId: "s1" }),
      assistant("t3", "three", "completed", { runnerSessionId: "s2" }),
    ]);
    agree("s2");
  });

  it("isResumableFile, read from the file's end, agrees with isResumable of the whole conversation", () => {
    const file = path.join(tmp(), "s.jsonl");
    const agree = (want: boolean) => {
      expect(isResumableFile(file)).toBe(want);
      expect(isResumable(loadSession(file))).toBe(want);
    };
    agree(false);
    seed(file);
    agree(false);
    appendSession(file, [user("t1", "first"), assistant("t1", "boom", "errored")]);
    agree(false);
    appendSession(file, [user("t2", "second"), assistant("t2", "answer", "completed")]);
    agree(true);
    // Later failed turns, and a long one, leave it resumable: the completed answer is further back.
    appendSession(file, [user("t3", "third"), assistant("t3", "c".repeat(500_000), "cancelled")]);
    appendSession(file, [user("t4", "fourth")]);
    agree(true);
  });

  it("sessionAsOfNow reads nothing until asked, then the conversation as it stood, not what was appended since", () => {
    const file = path.join(tmp(), "s.jsonl");
    seed(file);
    appendSession(file, [user("t1", "first"), assistant("t1", "answer 1", "completed")]);
    const history = sessionAsOfNow(file);
    appendSession(file, [user("t2", "second")]);
    expect(transcript(history())).toBe("User:\nfirst\n\nAssistant:\nanswer 1");
    expect(history()).toBe(history());
    expect(loadSession(file).messages.at(-1)?.text).toBe("second");
    // A conversation not begun yet is empty, and stays so for this turn.
    const fresh = sessionAsOfNow(path.join(tmp(), "none.jsonl"));
    expect(fresh().messages).toEqual([]);
  });
});
