/**
 * Codex's `app-server` (JSON-RPC over stdio, protocol v2 as `codex app-server generate-ts` prints it for 0.171)
 * as a session driver: `initialize`, `thread/start` or `thread/resume`, then a `turn/start` per turn whose
 * notifications (`item/*`, `thread/tokenUsage/updated`) stream the turn until `turn/completed`;
 * `turn/interrupt` ends a turn. Approval requests (`item/commandExecution/requestApproval`,
 * `item/fileChange/requestApproval`) go to the parent through `io.askPermission`.
 */
import { RpcError, RpcPeer } from "../acp/rpc.js";
import { classifyProvider, classifyText, type ProviderError } from "../common/provider-error.js";
import { num, obj, str, toolSummary } from "../common/shared.js";
import type { AgentMessage, SessionDriver, SessionIo, SessionSpec } from "../types.js";

// Item types that are tool activity, with the name muster shows for them (as `codex exec --json` does).
const TOOL_ITEMS: Record<string, string> = {
  commandExecution: "shell",
  fileChange: "edit",
  mcpToolCall: "mcp",
  webSearch: "web_search",
};

function itemSummary(item: Record<string, unknown>): string {
  if (item.type === "fileChange") {
    const changes = Array.isArray(item.changes) ? item.changes.map(obj) : [];
    return changes.map((c) => `${str(obj(c.kind).type) ?? "edit"} ${str(c.path) ?? ""}`.trim()).join(", ");
  }
  if (item.type === "mcpToolCall") return `${str(item.server) ?? ""}.${str(item.tool) ?? ""}`;
  return toolSummary(item.command ?? item.query ?? item);
}

/** One turn's notifications → muster messages; stateful, one per turn. */
export function codexAppTurnReader() {
  let answer = "";
  // Messages whose deltas were shown as they came: not shown again when they complete.
  const streamed = new Set<string>();
  const usage = { input: 0, output: 0, seen: false };
  const open = new Map<string, string>();
  return {
    notification(method: string, p: Record<string, unknown>): AgentMessage[] {
      const item = obj(p.item);
      const id = str(item.id) ?? "";
      switch (method) {
        case "item/agentMessage/delta": {
          const d = str(p.delta);
          if (!d) return [];
          streamed.add(str(p.itemId) ?? "");
          return [{ type: "text", text: d }];
        }
        case "item/started": {
          const name = TOOL_ITEMS[str(item.type) ?? ""];
          if (!name || open.has(id)) return [];
          open.set(id, name);
          return [{ type: "tool", phase: "start", name, summary: itemSummary(item) }];
        }
        case "item/completed": {
          if (item.type === "agentMessage") {
            const text = str(item.text) ?? "";
            answer = text;
            if (streamed.has(id)) return [{ type: "text", text: "\n" }];
            return text ? [{ type: "text", text: `${text}\n` }] : [];
          }
          if (item.type === "reasoning") {
            const summary = Array.isArray(item.summary)
              ? item.summary.filter((s) => typeof s === "string")
              : [];
            return summary.length ? [{ type: "progress", text: toolSummary(summary.join(" ")) }] : [];
          }
          const name = TOOL_ITEMS[str(item.type) ?? ""];
          if (!name) return [];
          // A call refused before it started (declined) still shows as a tool that ended.
          const start: AgentMessage[] = open.has(id)
            ? []
            : [{ type: "tool", phase: "start", name, summary: itemSummary(item) }];
          open.delete(id);
          const code = num(item.exitCode);
          const status = str(item.status) ?? "";
          const bad = status === "failed" || status === "declined" || (code !== undefined && code !== 0);
          const why =
            status === "declined" ? "declined" : `failed${code !== undefined ? ` (exit ${code})` : ""}`;
          return [...start, { type: "tool", phase: "end", name, summary: bad ? why : "" }];
        }
        case "thread/tokenUsage/updated": {
          // `last` is one model call's; the turn's usage is their sum.
          const last = obj(obj(p.tokenUsage).last);
          usage.input += num(last.inputTokens) ?? 0;
          usage.output += num(last.outputTokens) ?? 0;
          usage.seen = true;
          return [];
        }
        case "error": {
          // A retry notice is progress; the turn's own end says how it ended.
          const m = str(obj(p.error).message);
          return m && p.willRetry === true ? [{ type: "progress", text: toolSummary(m) }] : [];
        }
      }
      return [];
    },
    /** The turn's `turn/completed`: its usage and how it ended (nothing for an interrupted turn). */
    end(turn: Record<string, unknown>): AgentMessage[] {
      const out: AgentMessage[] = usage.seen
        ? [{ type: "usage", usage: { input: usage.input, output: usage.output } }]
        : [];
      const status = str(turn.status);
      if (status === "completed") out.push({ type: "result", status: "completed", text: answer });
      else if (status === "failed") {
        const reason = str(obj(turn.error).message) ?? "the turn failed";
        const providerError = codexProviderError(obj(turn.error).codexErrorInfo, reason);
        out.push({ type: "result", status: "errored", reason, ...(providerError ? { providerError } : {}) });
      }
      // "interrupted": the turn was stopped from here; the host's stop reason decides its outcome.
      return out;
    },
  };
}

/**
 * The app-server's `codexErrorInfo` (a name, or `{<name>: {httpStatusCode}}`) → a provider error: its names
 * for a quota (usageLimitExceeded), a refused credential (unauthorized) and an overloaded model
 * (serverOverloaded), else the HTTP status it carries. Its message adds a retry delay when it says one.
 */
export function codexProviderError(info: unknown, message: string): ProviderError | undefined {
  const name = typeof info === "string" ? info : Object.keys(obj(info))[0];
  if (!name) return undefined;
  // The rollout file spells the same record in snake case (usage_limit_exceeded, http_status_code).
  const detail = obj(obj(info)[name]);
  const status = num(detail.httpStatusCode) ?? num(detail.http_status_code);
  const fromText = classifyText(message, status);
  const kind = classifyProvider({ ...(status !== undefined ? { status } : {}), codes: [name], message });
  if (!kind) return undefined;
  return fromText?.kind === kind.kind && fromText.resetAt ? { ...kind, resetAt: fromText.resetAt } : kind;
}

type Reader = ReturnType<typeof codexAppTurnReader>;

/** What a codex app-server session spec says of its thread (`SessionSpec.options`, written by runner.ts). */
export interface CodexThread {
  approvalPolicy: "never" | "untrusted";
  sandbox: string;
  /** A new thread's developer instructions (the profile's system prompt). */
  developerInstructions?: string;
}

export function codexAppDriver(spec: SessionSpec<CodexThread>, io: SessionIo): SessionDriver {
  const thread = spec.options ?? { approvalPolicy: "never", sandbox: "workspace-write" };
  let threadId: string | undefined;
  let turn:
    | {
        reader: Reader;
        onMessage: (m: AgentMessage) => void;
        done: () => void;
        id?: string;
        interrupt?: boolean;
        ended?: boolean;
      }
    | undefined;
  // Turns already over: their late notifications belong to no turn.
  const over = new Set<string>();
  const changes = new Map<string, string>();
  const peer = new RpcPeer(
    (line) => io.write(line),
    {
      notification(method, params) {
        const p = obj(params);
        // A file change's approval request names only its item: what it changes came with the item.
        const item = obj(p.item);
        if (method === "item/started" && item.type === "fileChange" && str(item.id))
          changes.set(item.id as string, itemSummary(item));
        if (!turn || (p.threadId !== undefined && p.threadId !== threadId)) return;
        const turnId = str(p.turnId) ?? str(obj(p.turn).id);
        if (turnId && over.has(turnId)) return;
        // Only `turn/started` names the new turn (a resumed thread replays its last turn's usage first).
        if (method === "turn/started" && turnId) adopt(turnId);
        // Whatever names another turn (or a turn before ours is known) is not this turn's.
        if (turnId && turnId !== turn.id) return;
        if (method === "turn/completed") {
          const t = obj(p.turn);
          if (turn.id === undefined) return;
          for (const m of turn.reader.end(t)) turn.onMessage(m);
          turn.ended = true;
          turn.done();
          return;
        }
        for (const m of turn.reader.notification(method, p)) turn.onMessage(m);
      },
      async request(method, params) {
        const p = obj(params);
        if (method === "item/commandExecution/requestApproval")
          return {
            decision: decision(await io.askPermission("shell", toolSummary(p.command ?? p.reason ?? ""))),
          };
        if (method === "item/fileChange/requestApproval") {
          const what = changes.get(str(p.itemId) ?? "") || str(p.reason) || str(p.grantRoot);
          return { decision: decision(await io.askPermission("edit", what)) };
        }
        throw new RpcError(-32601, `muster does not offer ${method}`);
      },
    },
    // app-server leaves out the `jsonrpc` member of its messages.
    { requireVersion: false },
  );
  /** The running turn's id is known: an interrupt asked for before then goes now. */
  const adopt = (id: string): void => {
    if (!turn || turn.id !== undefined) return;
    turn.id = id;
    if (turn.interrupt) sendInterrupt();
  };
  const sendInterrupt = (): void => {
    if (!turn?.id || !threadId) return;
    void peer.request("turn/interrupt", { threadId, turnId: turn.id }).catch(() => {});
  };
  const threadParams = {
    cwd: spec.cwd,
    approvalPolicy: thread.approvalPolicy,
    sandbox: thread.sandbox,
  };
  return {
    line: (text) => peer.line(text),
    async open() {
      await peer.request("initialize", {
        clientInfo: { name: "muster", title: "muster", version: "1" },
        capabilities: { experimentalApi: false, requestAttestation: false },
      });
      peer.notify("initialized", undefined);
      const opened = obj(
        spec.resume
          ? await peer.request("thread/resume", {
              ...threadParams,
              threadId: spec.resume,
              excludeTurns: true,
            })
          : await peer.request("thread/start", {
              ...threadParams,
              ...(thread.developerInstructions
                ? { developerInstructions: thread.developerInstructions }
                : {}),
            }),
      );
      threadId = str(obj(opened.thread).id);
      if (!threadId) throw new Error("codex app-server opened no thread");
      return threadId;
    },
    async prompt(text, onMessage) {
      const ended = new Promise<void>((done) => {
        turn = { reader: codexAppTurnReader(), onMessage, done };
      });
      const current = turn!;
      try {
        const started = obj(
          await peer.request("turn/start", {
            threadId,
            input: [{ type: "text", text, text_elements: [] }],
          }),
        );
        const id = str(obj(started.turn).id);
        if (id) adopt(id);
        await ended;
      } catch (e) {
        if (!current.ended) onMessage({ type: "result", status: "errored", reason: (e as Error).message });
      } finally {
        if (current.id) over.add(current.id);
        changes.clear();
        turn = undefined;
      }
    },
    interrupt() {
      if (!turn) return;
      turn.interrupt = true;
      sendInterrupt();
    },
    close(why) {
      peer.close(why);
      // A turn waiting for its end ends with the process.
      if (turn && !turn.ended) {
        turn.ended = true;
        turn.onMessage({ type: "result", status: "errored", reason: why.message });
        turn.done();
      }
    },
  };
}

/** The parent's answer in app-server's words. */
function decision(answer: "allow" | "allow_always" | "deny"): string {
  return answer === "allow" ? "accept" : answer === "allow_always" ? "acceptForSession" : "decline";
}
