/**
 * Pi's RPC mode (`pi --mode rpc`) as a session driver: JSONL commands on stdin (`prompt`, `abort`,
 * `get_state`), responses (`type: "response"`, matched by id) and the same events as `--mode json` on stdout,
 * read by piParser; a turn ends on `agent_end`.
 */
import type { AgentMessage, SessionDriver, SessionIo, StreamParser } from "../types.js";
import { piParser } from "./pi.js";
import { jsonObject, obj, str } from "./shared.js";

type Pending = { resolve: (data: unknown) => void; reject: (e: Error) => void };

export function piRpcDriver(io: SessionIo): SessionDriver {
  let next = 1;
  const pending = new Map<string, Pending>();
  let closed: Error | undefined;
  let turn: { parser: StreamParser; onMessage: (m: AgentMessage) => void; done: () => void } | undefined;
  const command = (type: string, fields: Record<string, unknown> = {}): Promise<unknown> => {
    if (closed) return Promise.reject(closed);
    const id = `m${next++}`;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      io.write(`${JSON.stringify({ id, type, ...fields })}\n`);
    });
  };
  return {
    line(text) {
      const o = jsonObject(text);
      if (!o) return false;
      if (o.type === "response") {
        const p = pending.get(str(o.id) ?? "");
        if (p) {
          pending.delete(str(o.id)!);
          if (o.success === false)
            p.reject(new Error(str(o.error) ?? `pi refused ${str(o.command) ?? "a command"}`));
          else p.resolve(o.data);
        }
        return true;
      }
      if (!turn) return true;
      for (const m of turn.parser.line(text)) {
        turn.onMessage(m);
        if (m.type === "result") turn.done();
      }
      return true;
    },
    async open() {
      return str(obj(await command("get_state")).sessionId);
    },
    async prompt(text, onMessage) {
      const ended = new Promise<void>((done) => {
        turn = { parser: piParser(), onMessage, done };
      });
      try {
        await command("prompt", { message: text });
        await ended;
      } catch (e) {
        onMessage({ type: "result", status: "errored", reason: (e as Error).message });
      } finally {
        turn = undefined;
      }
    },
    interrupt() {
      if (turn) void command("abort").catch(() => {});
    },
    close(why) {
      if (closed) return;
      closed = why;
      for (const p of pending.values()) p.reject(why);
      pending.clear();
      // A turn waiting for agent_end ends with the process.
      if (turn) {
        turn.onMessage({ type: "result", status: "errored", reason: why.message });
        turn.done();
      }
    },
  };
}
