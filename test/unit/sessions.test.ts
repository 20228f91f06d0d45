import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { seedSession } from "../../src/sessions/seed.js";
import {
  appendSession,
  isResumable,
  lastRunnerSession,
  lastSettings,
  listSessions,
  loadSession,
  manifestOf,
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
