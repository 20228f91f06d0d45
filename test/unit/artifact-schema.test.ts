import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { loadSchema, loadValidators } from "../helpers/schema.js";

const { validateEvent, validateMeta, validateAgentMessage, validateInboxItem, validateControlRequest } =
  loadValidators();

const TURN = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e6f";
const COMPLETION_ID = "01970c2f-0a1b-7c2d-8e3f-405162738495";
const REQUEST = "01970c2e-9a00-7b21-9c4d-aabbccddeeff";
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

type Rec = Record<string, unknown>;

let nextSeq = 1;
/** Fills in the common fields of a record, the way the log writer does. */
function ev(fields: Rec, eventId?: string): Rec {
  const seq = nextSeq++;
  const id = eventId ?? `01970c2e-0000-7000-8000-${String(seq).padStart(12, "0")}`;
  return { v: 1, eventId: id, seq, ts: "2025-05-31T12:00:00.123Z", ...fields };
}

function without(obj: Rec, key: string): Rec {
  const { [key]: _dropped, ...rest } = obj;
  return rest;
}

const valid = {
  worktree_setup: ev({
    type: "worktree_setup",
    included: { files: 2, bytes: 120 },
    script: ".muster/worktree-setup",
    exitCode: 0,
    durationMs: 2400,
    outputTail: "added 12 packages\n",
  }),
  child_started: ev({ type: "child_started", pid: 4242, runner: "mock", by: "spawn" }),
  turn_started: ev({
    type: "turn_started",
    turnId: TURN,
    source: "inbox",
    promptBytes: 11,
    promptSha256: SHA,
    promptPath: `prompts/${TURN}.txt`,
    model: "mock-1",
    reasoning: "low",
  }),
  turn_queued: ev({ type: "turn_queued", turnId: TURN, running: 4, limit: 4 }),
  turn_held: ev({
    type: "turn_held",
    turnId: TURN,
    kind: "quota",
    reason: "You exceeded your current quota, please check your plan and billing details.",
    resetAt: "2025-06-01T10:00:00.000Z",
  }),
  rate_limited: ev({
    type: "rate_limited",
    turnId: TURN,
    resetAt: "2025-06-01T09:32:00.000Z",
    attempt: 1,
    reason: "429 Rate limit reached. Please try again in 20s.",
  }),
  runner_started: ev({ type: "runner_started", turnId: TURN, pid: 4250, argv0: "node" }),
  agent_session: ev({
    type: "agent_session",
    turnId: TURN,
    modes: ["read-only", "auto", "full-access"],
    mode: "auto",
    models: ["gpt-5.5"],
    model: "gpt-5.5",
    warnings: ["the agent offers no reasoning choice: --reasoning high is not applied"],
  }),
  runner_exited: ev({
    type: "runner_exited",
    turnId: TURN,
    pid: 4250,
    exitCode: 3,
    signal: null,
    killed: false,
  }),
  tool_activity: ev({
    type: "tool_activity",
    turnId: TURN,
    phase: "start",
    name: "read",
    summary: "src/a.ts",
  }),
  usage: ev({ type: "usage", turnId: TURN, usage: { input: 1200, output: 340, cost: 0.0042 } }),
  progress: ev({ type: "progress", turnId: TURN, text: "read 3 files" }),
  permission: ev({ type: "permission", turnId: TURN, state: "denied", tool: "WebFetch" }),
  question: ev({
    type: "question",
    turnId: TURN,
    requestId: REQUEST,
    text: "Which branch should I use?",
    choices: ["main", "dev"],
  }),
  answered: ev({ type: "answered", turnId: TURN, requestId: REQUEST, outcome: "answered", text: "dev" }),
  completion: ev(
    {
      type: "completion",
      turnId: TURN,
      status: "completed",
      reason: "exit code 0",
      exitCode: 0,
      signal: null,
      durationMs: 5120,
      usage: { input: 1200, output: 340 },
      output: { path: `outputs/${COMPLETION_ID}.md`, bytes: 42, sha256: SHA },
      by: "child",
    },
    COMPLETION_ID,
  ),
  restarted: ev({
    type: "restarted",
    turnId: TURN,
    reason: "child host (pid 4242) is gone (signal SIGKILL)",
    attempt: 1,
    max: 3,
    by: "parent",
  }),
  verify_started: ev({ type: "verify_started", turnId: TURN, attempt: 1, command: "npm test" }),
  verify_finished: ev({
    type: "verify_finished",
    turnId: TURN,
    attempt: 1,
    exitCode: 1,
    durationMs: 2400,
    outputTail: "1 failing",
    retrying: true,
  }),
  child_exited: ev({ type: "child_exited", reason: "closed", by: "child" }),
};

const completion = valid.completion;
const bare = without(completion, "output");

describe("event.schema.json", () => {
  it.each(Object.entries(valid))("accepts a valid %s record", (_type, record) => {
    expect(validateEvent(record)).toEqual([]);
  });

  it("has one sub-schema per event type, and the examples cover them all", () => {
    const schema = loadSchema("event.schema.json") as { oneOf: unknown[] };
    expect(schema.oneOf).toHaveLength(Object.keys(valid).length);
  });

  it.each<[string, Rec]>([
    [
      "errored with output_too_large",
      {
        ...bare,
        status: "errored",
        outputError: {
          code: "output_too_large",
          message: "output is 2097152 bytes (limit 1048576)",
          bytes: 2097152,
        },
      },
    ],
    [
      "incomplete with output_unreadable",
      { ...bare, status: "incomplete", outputError: { code: "output_unreadable", message: "EIO" } },
    ],
    [
      "lost, by a parent, with no output",
      { ...bare, status: "lost", reason: "child host (pid 4242) is gone", exitCode: null, by: "parent" },
    ],
    [
      "cancelled, by a parent, for a turn that never started",
      {
        ...without(without(bare, "durationMs"), "usage"),
        status: "cancelled",
        reason: "cancelled by muster cancel; the turn never started",
        exitCode: null,
        signal: null,
        by: "parent",
      },
    ],
    [
      "lost, by the child (its pane was closed), with a snapshot",
      { ...completion, status: "lost", reason: "the pane was closed while the turn ran", signal: "SIGTERM" },
    ],
    [
      "cancelled, by the child (Ctrl-C), with a snapshot",
      { ...completion, status: "cancelled", reason: "interrupted in the pane (Ctrl-C)", exitCode: null },
    ],
    ["exhausted with output", { ...completion, status: "exhausted", reason: "max turns reached" }],
  ])("accepts a completion: %s", (_what, record) => {
    expect(validateEvent(record)).toEqual([]);
  });

  it("accepts other valid shapes", () => {
    expect(validateEvent({ ...valid.child_started, by: "resume" })).toEqual([]);
    for (const [reason, by] of [
      ["lost", "parent"],
      ["cancelled", "parent"],
      ["lost", "child"],
      ["cancelled", "child"],
      ["error", "child"],
    ]) {
      expect(
        validateEvent({ ...valid.child_exited, reason, by, detail: "why" }),
        `${reason} by ${by}`,
      ).toEqual([]);
    }
    expect(validateEvent(without({ ...valid.turn_started, source: "typed" }, "model"))).toEqual([]);
    expect(validateEvent(without(valid.progress, "turnId"))).toEqual([]);
    expect(validateEvent({ ...valid.usage, ts: "2025-05-31T14:00:00+02:00" })).toEqual([]);
  });

  it("accepts unknown extra properties (forward compatibility)", () => {
    expect(validateEvent({ ...valid.progress, futureField: { x: 1 } })).toEqual([]);
    expect(
      validateEvent({ ...completion, output: { ...(completion.output as Rec), mime: "text/markdown" } }),
    ).toEqual([]);
  });

  const outputAt = (path: string, sha256 = SHA): Rec => ({
    ...completion,
    output: { path, bytes: 42, sha256 },
  });
  const invalid: Array<[string, unknown, string]> = [
    ["a record without seq", without(valid.usage, "seq"), "'seq'"],
    ["seq 0", { ...valid.usage, seq: 0 }, "/seq"],
    ["a non-integer seq", { ...valid.usage, seq: 1.5 }, "/seq"],
    ["v 0", { ...valid.usage, v: 0 }, "/v"],
    ["an eventId that is not a UUID", { ...valid.usage, eventId: "not-a-uuid" }, "/eventId"],
    ["an uppercase eventId", { ...valid.usage, eventId: COMPLETION_ID.toUpperCase() }, "/eventId"],
    ["a ts that is not a date-time", { ...valid.usage, ts: "yesterday" }, "/ts"],
    ["a ts without a zone", { ...valid.usage, ts: "2025-05-31T12:00:00.123" }, "/ts"],
    ["an unknown type", { ...valid.progress, type: "party" }, 'tag "type"'],
    ["a missing type", without(valid.progress, "type"), "'type'"],
    [
      "a completion with both output and outputError",
      { ...completion, outputError: { code: "output_unreadable", message: "EIO" } },
      "must NOT be valid",
    ],
    ["a completed completion with neither output nor outputError", bare, "'output'"],
    [
      "an errored completion with neither output nor outputError",
      { ...bare, status: "errored" },
      "'outputError'",
    ],
    ["a bad sha256", outputAt(`outputs/${COMPLETION_ID}.md`, "abc"), "/output/sha256"],
    ["an uppercase sha256", outputAt(`outputs/${COMPLETION_ID}.md`, SHA.toUpperCase()), "/output/sha256"],
    ["an output path escaping outputs/", outputAt(`outputs/../${COMPLETION_ID}.md`), "/output/path"],
    ["an absolute output path", outputAt(`/tmp/${COMPLETION_ID}.md`), "/output/path"],
    ["an output path in a subfolder", outputAt(`outputs/x/${COMPLETION_ID}.md`), "/output/path"],
    [
      "an output path not named after the completion's eventId",
      outputAt(`outputs/${TURN}.md`),
      "outputs/<eventId>.md",
    ],
    [
      "output_too_large without its byte count",
      { ...bare, outputError: { code: "output_too_large", message: "too large" } },
      "'bytes'",
    ],
    [
      "an unknown outputError code",
      { ...bare, outputError: { code: "oops", message: "?" } },
      "/outputError/code",
    ],
    ["an unknown completion status", { ...completion, status: "done" }, "/status"],
    ["a completed completion by a parent", { ...bare, by: "parent" }, "/status"],
    ["an errored completion by a parent", { ...bare, status: "errored", by: "parent" }, "/status"],
    [
      "a parent completion with a snapshot",
      { ...completion, status: "lost", by: "parent" },
      "must NOT be valid",
    ],
    [
      "a parent completion with an outputError",
      { ...bare, status: "lost", by: "parent", outputError: { code: "output_unreadable", message: "EIO" } },
      "must NOT be valid",
    ],
    ["a cancelled completion by the child without a snapshot", { ...bare, status: "cancelled" }, "'output'"],
    ["a lost completion by the child without a snapshot", { ...bare, status: "lost" }, "'output'"],
    ["a completion without by", without(completion, "by"), "'by'"],
    ["a completion without turnId", without(completion, "turnId"), "'turnId'"],
    ["a negative exit code", { ...completion, exitCode: -1 }, "/exitCode"],
    ["a signal that is not a signal name", { ...completion, signal: "9" }, "/signal"],
    [
      "a child_exited by a parent that is error",
      { ...valid.child_exited, reason: "error", by: "parent" },
      "/reason",
    ],
    ["a child_exited with an unknown reason", { ...valid.child_exited, reason: "bored" }, "/reason"],
    ["a child_started with an unknown by", { ...valid.child_started, by: "magic" }, "/by"],
    ["a non-integer pid", { ...valid.child_started, pid: 1.5 }, "/pid"],
    ["a promptPath outside prompts/", { ...valid.turn_started, promptPath: `../${TURN}.txt` }, "/promptPath"],
    [
      "a promptPath not named after the turnId",
      { ...valid.turn_started, promptPath: `prompts/${COMPLETION_ID}.txt` },
      "prompts/<turnId>.txt",
    ],
    ["a turn_started with an unknown source", { ...valid.turn_started, source: "mail" }, "/source"],
    ["a tool_activity with an unknown phase", { ...valid.tool_activity, phase: "middle" }, "/phase"],
    ["a usage without output tokens", { ...valid.usage, usage: { input: 1 } }, "'output'"],
    ["a negative token count", { ...valid.usage, usage: { input: -1, output: 0 } }, "/usage/input"],
    ["a usage without turnId", without(valid.usage, "turnId"), "'turnId'"],
    ["an empty progress text", { ...valid.progress, text: "" }, "/text"],
    ["an array", [valid.progress], "must be object"],
  ];

  it.each(invalid)("rejects %s", (_what, record, expected) => {
    const errors = validateEvent(record);
    expect(errors.join("\n")).toContain(expected);
  });

  it("is plain draft 2020-12: a validator that ignores ajv's discriminator keyword agrees", () => {
    const ajv = new Ajv2020({ allErrors: true, strictSchema: false, allowUnionTypes: true });
    const validate = ajv.compile(loadSchema("event.schema.json"));
    for (const record of Object.values(valid)) expect(validate(record)).toBe(true);
    for (const [what, record, expected] of invalid) {
      if (expected.includes("<")) continue; // the cross-field naming rules live in the helper, not the schema
      expect(validate(record), what).toBe(false);
    }
  });
});

const validMeta = {
  v: 1,
  id: "01970c2d-1111-7222-8333-444455556666",
  primary: "01970c2c-aaaa-7bbb-8ccc-dddddddddddd",
  parent: null,
  depth: 0,
  agent: "explorer",
  runner: "mock",
  cwd: "/work/project",
  createdAt: "2025-05-31T12:00:00.000Z",
  profile: {
    name: "explorer",
    source: "/usr/lib/node_modules/muster/agents/explorer.md",
    model: "mock-1",
    reasoning: "low",
    command: ["node", "fake-agent.js"],
    protocol: "muster-jsonl",
    systemPrompt: "You explore.",
  },
  envNames: ["PATH", "HOME", "MUSTER_CHILD_ID"],
};

describe("meta.schema.json", () => {
  it.each<[string, unknown]>([
    ["a full meta.json", validMeta],
    ["a grandchild", { ...validMeta, parent: "01970c2d-0000-7000-8000-000000000001", depth: 1 }],
    [
      "a minimal profile",
      { ...validMeta, profile: { name: "worker", source: "/p/.muster/agents/worker.md" } },
    ],
    ["no environment names", { ...validMeta, envNames: [] }],
    ["an unknown extra field", { ...validMeta, labels: ["x"] }],
  ])("accepts %s", (_what, meta) => {
    expect(validateMeta(meta)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ["a missing primary", without(validMeta, "primary"), "'primary'"],
    ["a missing parent (null, not absent, for a top-level child)", without(validMeta, "parent"), "'parent'"],
    ["a missing envNames", without(validMeta, "envNames"), "'envNames'"],
    ["an id that is not a UUID", { ...validMeta, id: "../etc" }, "/id"],
    ["a parent that is not a UUID", { ...validMeta, parent: "root" }, "/parent"],
    ["a negative depth", { ...validMeta, depth: -1 }, "/depth"],
    ["a relative cwd", { ...validMeta, cwd: "project" }, "/cwd"],
    ["a createdAt that is not a date-time", { ...validMeta, createdAt: "2025-05-31" }, "/createdAt"],
    ["an environment value instead of a name", { ...validMeta, envNames: ["API_KEY=secret"] }, "/envNames/0"],
    ["duplicate environment names", { ...validMeta, envNames: ["PATH", "PATH"] }, "/envNames"],
    ["a profile without source", { ...validMeta, profile: { name: "explorer" } }, "'source'"],
    [
      "an unknown runner protocol",
      { ...validMeta, profile: { ...validMeta.profile, protocol: "xml" } },
      "/profile/protocol",
    ],
    [
      "a shell string as command",
      { ...validMeta, profile: { ...validMeta.profile, command: "node a.js" } },
      "/profile/command",
    ],
    [
      "an empty command",
      { ...validMeta, profile: { ...validMeta.profile, command: [] } },
      "/profile/command",
    ],
  ])("rejects %s", (_what, meta, expected) => {
    expect(validateMeta(meta).join("\n")).toContain(expected);
  });
});

describe("agent-message.schema.json", () => {
  const accepted: unknown[] = [
    { type: "text", text: "Looking at the repo" },
    { type: "text", text: "" },
    { type: "tool", phase: "start", name: "bash", summary: "ls src" },
    { type: "tool", phase: "end", name: "bash", summary: "12 entries" },
    { type: "usage", input: 100, output: 20 },
    { type: "usage", input: 100, output: 20, cost: 0.001 },
    { type: "session", id: "sess-7" },
    { type: "progress", text: "halfway" },
    { type: "result", status: "completed", text: "All done." },
    { type: "result", status: "errored" },
    { type: "result", status: "exhausted", reason: "Reached maximum number of turns (3)" },
    { type: "text", text: "hi", extra: true },
  ];

  it.each(accepted.map((m) => [JSON.stringify(m), m]))("accepts %s", (_json, message) => {
    expect(validateAgentMessage(message)).toEqual([]);
  });

  const rejected: unknown[] = [
    { type: "shout", text: "HI" },
    { text: "no type" },
    { type: "text" },
    { type: "text", text: 42 },
    { type: "tool", phase: "begin", name: "bash", summary: "" },
    { type: "tool", phase: "start", summary: "no name" },
    { type: "tool", phase: "start", name: "bash" },
    { type: "usage", input: 1 },
    { type: "usage", input: 1.5, output: 2 },
    { type: "usage", input: 1, output: 2, cost: -1 },
    { type: "session", id: "" },
    { type: "progress", text: "" },
    { type: "result", status: "cancelled" },
    { type: "result", status: "errored", reason: 7 },
    { type: "result" },
    "plain text line",
    null,
  ];

  it.each(rejected.map((m) => [JSON.stringify(m), m]))("rejects %s", (_json, message) => {
    expect(validateAgentMessage(message)).not.toEqual([]);
  });
});

const INBOX_TURN = "01970c30-1d00-7e2b-8c3d-9e0f1a2b3c4d";
const validInbox = {
  v: 1,
  turnId: INBOX_TURN,
  prompt: "Now list the tests.\n\nThanks.",
  source: "inbox",
  model: "mock-1",
  reasoning: "high",
  createdAt: "2025-05-31T12:05:00.000Z",
};

describe("inbox-item.schema.json", () => {
  it.each<[string, unknown]>([
    ["a full item", validInbox],
    ["a typed line", { ...without(without(validInbox, "model"), "reasoning"), source: "typed" }],
    ["an unknown extra field", { ...validInbox, priority: 3 }],
  ])("accepts %s", (_what, item) => {
    expect(validateInboxItem(item, `0000000000000003-${INBOX_TURN}.json`)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ["a missing turnId", without(validInbox, "turnId"), "'turnId'"],
    ["a turnId that is not a UUID", { ...validInbox, turnId: "../../etc/passwd" }, "/turnId"],
    ["a missing prompt", without(validInbox, "prompt"), "'prompt'"],
    ["an empty prompt", { ...validInbox, prompt: "" }, "/prompt"],
    ["a blank prompt", { ...validInbox, prompt: " \n\t" }, "/prompt"],
    ["the old text field instead of prompt", { ...without(validInbox, "prompt"), text: "hi" }, "'prompt'"],
    ["a missing source", without(validInbox, "source"), "'source'"],
    ["an unknown source", { ...validInbox, source: "mail" }, "/source"],
    ["v 2", { ...validInbox, v: 2 }, "/v"],
    ["a missing createdAt", without(validInbox, "createdAt"), "'createdAt'"],
    ["an empty model", { ...validInbox, model: "" }, "/model"],
  ])("rejects %s", (_what, item, expected) => {
    expect(validateInboxItem(item).join("\n")).toContain(expected);
  });

  it("checks the file name against the item's turnId when given", () => {
    expect(validateInboxItem(validInbox)).toEqual([]);
    for (const bad of [
      `0000000000000003-${TURN}.json`,
      // The arrival number is 16 digits; a name after the turn id alone is the old form.
      `000000000003-${INBOX_TURN}.json`,
      `${INBOX_TURN}.json`,
    ])
      expect(validateInboxItem(validInbox, bad).join("\n")).toContain("<turnId>.json");
  });
});

describe("control-request.schema.json", () => {
  const NAME = "001748770200600-9f3c2a1b.json";

  it.each<[string, unknown]>([
    ["progress", { kind: "progress", text: "read 3 files" }],
    ["done with text", { kind: "done", text: "# Answer\n\nAll good.\n" }],
    ["done without text", { kind: "done", text: "" }],
    ["error", { kind: "error", text: "the build is broken" }],
    ["an unknown extra field", { kind: "progress", text: "x", at: 1 }],
    ["ask", { kind: "ask", text: "Which branch?", requestId: REQUEST, choices: ["main", "dev"] }],
    ["answered", { kind: "answered", text: "dev", requestId: REQUEST, outcome: "answered" }],
  ])("accepts %s", (_what, req) => {
    expect(validateControlRequest(req, NAME)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ["an unknown kind", { kind: "bogus", text: "?" }, "/kind"],
    ["a missing kind", { text: "x" }, "'kind'"],
    ["a missing text", { kind: "done" }, "'text'"],
    ["a non-string text", { kind: "progress", text: 3 }, "/text"],
    ["a blank progress", { kind: "progress", text: "  " }, "/text"],
    ["an empty error", { kind: "error", text: "" }, "/text"],
  ])("rejects %s", (_what, req, expected) => {
    expect(validateControlRequest(req).join("\n")).toContain(expected);
  });

  it.each([
    "1748770200600-9f3c2a1b.json",
    "001748770200600-9F3C2A1B.json",
    "001748770200600-9f3c2a1b.json.tmp",
    ".001748770200600-9f3c2a1b.json.tmp",
  ])("rejects the file name %s", (name) => {
    expect(validateControlRequest({ kind: "progress", text: "x" }, name).join("\n")).toContain(
      "<15-digit ms>",
    );
  });
});

describe("schema files", () => {
  it.each([
    "event.schema.json",
    "meta.schema.json",
    "agent-message.schema.json",
    "inbox-item.schema.json",
    "control-request.schema.json",
  ])("%s declares draft 2020-12", (name) => {
    expect(loadSchema(name).$schema).toBe("https://json-schema.org/draft/2020-12/schema");
  });
});

describe("artifacts/README.md examples", () => {
  const readme = readFileSync(new URL("../../artifacts/README.md", import.meta.url), "utf8");
  const blocks = (lang: string): string[] =>
    [...readme.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1]!);
  const lines = (lang: string): string[] =>
    blocks(lang)
      .flatMap((b) => b.split("\n"))
      .filter((l) => l !== "");

  /** The JSON examples, told apart by their keys. */
  const jsonExamples = (): Record<"meta" | "inbox" | "control", unknown[]> => {
    const out = { meta: [] as unknown[], inbox: [] as unknown[], control: [] as unknown[] };
    for (const block of blocks("json")) {
      const obj = JSON.parse(block) as Rec;
      if ("envNames" in obj) out.meta.push(obj);
      else if ("prompt" in obj) out.inbox.push(obj);
      else if ("kind" in obj) out.control.push(obj);
      else throw new Error(`README json example of unknown kind: ${block}`);
    }
    return out;
  };

  it("has event, agent message, meta.json, inbox and control examples", () => {
    expect(lines("ndjson").length).toBeGreaterThanOrEqual(9);
    expect(lines("jsonl").length).toBeGreaterThanOrEqual(6);
    const json = jsonExamples();
    expect(json.meta).toHaveLength(1);
    expect(json.inbox).toHaveLength(1);
    expect(json.control).toHaveLength(1);
  });

  it.each(lines("ndjson").map((l) => [l.slice(0, 90), l]))("event example %s… is valid", (_head, line) => {
    expect(validateEvent(JSON.parse(line))).toEqual([]);
  });

  it("shows every event type, with seq strictly increasing in each block", () => {
    const records = blocks("ndjson").map((b) =>
      b
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { seq: number; type: string }),
    );
    const reserved = new Set<string>(); // every defined type is written by this version
    const shown = new Set(records.flat().map((r) => r.type));
    expect(shown).toEqual(new Set(Object.keys(valid).filter((t) => !reserved.has(t))));
    for (const block of records) {
      for (let i = 1; i < block.length; i++) expect(block[i]!.seq).toBeGreaterThan(block[i - 1]!.seq);
    }
  });

  it("a completion's usage is the sum of its turn's usage events (they are increments)", () => {
    type U = { input: number; output: number; cost?: number };
    const records = lines("ndjson").map((l) => JSON.parse(l) as { type: string; turnId?: string; usage?: U });
    let checked = 0;
    for (const c of records.filter((r) => r.type === "completion" && r.usage)) {
      const parts = records.filter((r) => r.type === "usage" && r.turnId === c.turnId).map((r) => r.usage!);
      if (parts.length === 0) continue;
      checked++;
      expect(c.usage!.input).toBe(parts.reduce((n, u) => n + u.input, 0));
      expect(c.usage!.output).toBe(parts.reduce((n, u) => n + u.output, 0));
      expect(c.usage!.cost ?? 0).toBeCloseTo(
        parts.reduce((n, u) => n + (u.cost ?? 0), 0),
        10,
      );
    }
    expect(checked).toBeGreaterThan(0);
  });

  it.each(lines("jsonl").map((l) => [l, l]))("agent message example %s is valid", (_line, line) => {
    expect(validateAgentMessage(JSON.parse(line))).toEqual([]);
  });

  it("meta.json example is valid", () => {
    expect(validateMeta(jsonExamples().meta[0])).toEqual([]);
  });

  it("inbox example is valid and named after its turnId", () => {
    const item = jsonExamples().inbox[0] as { turnId: string };
    const name = readme.match(/^inbox\/([^\s/]+\.json)$/m)?.[1];
    expect(name).toBe(`0000000000000002-${item.turnId}.json`);
    expect(validateInboxItem(item, name)).toEqual([]);
  });

  it("control example is valid and well named", () => {
    const name = readme.match(/^control\/([^\s/<]+\.json)$/m)?.[1];
    expect(name).toBeDefined();
    expect(validateControlRequest(jsonExamples().control[0], name)).toEqual([]);
  });
});
