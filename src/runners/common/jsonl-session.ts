/**
 * A long-lived CLI that takes JSONL commands on stdin and streams its usual JSONL events on stdout (Pi's RPC
 * mode, Claude Code's stream-json input), as a session driver: a turn is one prompt line, its events are read
 * by the CLI's own stream parser, and it ends on the parser's `result`. Commands that the CLI acknowledges
 * (`{type: "response", id, success}`) are awaited; a refusal ends the turn errored.
 */
import type { AgentMessage, SessionDriver, SessionIo, StreamParser } from "../types.js";
import { jsonObject, str } from "./shared.js";

export interface JsonlSessionOptions {
  /** A fresh parser for one turn's events. */
  parser(): StreamParser;
  /** The line that gives the agent a prompt (with `id` when the CLI acknowledges commands). */
  prompt(text: string, id: string): Record<string, unknown>;
  /** The line that interrupts the running turn. */
  interrupt(id: string): Record<string, unknown>;
  /** Whether the CLI answers each command with `{type: "response", id, success}`. */
  acknowledges: boolean;
  /**
   * A request from the agent that muster answers with one line (Claude's `can_use_tool`): the answer, once
   * known; undefined when `o` is no such request.
   */
  request?(o: Record<string, unknown>, io: SessionIo): Promise<Record<string, unknown>> | undefined;
  /** Opens the session (e.g. asks for its id); absent: the id arrives with the first turn's events. */
  open?(command: (fields: Record<string, unknown>) => Promise<unknown>): Promise<string | undefined>;
}

type Pending = { resolve: (data: unknown) => void; reject: (e: Error) => void };

export function jsonlSessionDriver(io: SessionIo, opts: JsonlSessionOptions): SessionDriver {
  let next = 1;
  const pending = new Map<string, Pending>();
  let closed: Error | undefined;
  let turn: { parser: StreamParser; onMessage: (m: AgentMessage) => void; done: () => void } | undefined;
  /** Writes a command; resolves with its acknowledgement (at once for a CLI that sends none). */
  const command = (make: (id: string) => Record<string, unknown>): Promise<unknown> => {
    if (closed) return Promise.reject(closed);
    const id = `m${next++}`;
    const line = `${JSON.stringify(make(id))}\n`;
    if (!opts.acknowledges) {
      io.write(line);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      io.write(line);
    });
  };
  return {
    line(text) {
      const o = jsonObject(text);
      if (!o) return false;
      if (opts.acknowledges && o.type === "response") {
        const p = pending.get(str(o.id) ?? "");
        if (p) {
          pending.delete(str(o.id)!);
          if (o.success === false)
            p.reject(new Error(str(o.error) ?? `the agent refused ${str(o.command) ?? "a command"}`));
          else p.resolve(o.data);
        }
        return true;
      }
      const answer = opts.request?.(o, io);
      if (answer) {
        void answer.then(
          (a) => {
            if (!closed) io.write(`${JSON.stringify(a)}\n`);
          },
          () => {},
        );
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
      return opts.open ? opts.open((fields) => command((id) => ({ id, ...fields }))) : undefined;
    },
    async prompt(text, onMessage) {
      const ended = new Promise<void>((done) => {
        turn = { parser: opts.parser(), onMessage, done };
      });
      try {
        await command((id) => opts.prompt(text, id));
        await ended;
      } catch (e) {
        onMessage({ type: "result", status: "errored", reason: (e as Error).message });
      } finally {
        turn = undefined;
      }
    },
    interrupt() {
      if (turn) void command((id) => opts.interrupt(id)).catch(() => {});
    },
    close(why) {
      if (closed) return;
      closed = why;
      for (const p of pending.values()) p.reject(why);
      pending.clear();
      // A turn waiting for its result ends with the process.
      if (turn) {
        turn.onMessage({ type: "result", status: "errored", reason: why.message });
        turn.done();
      }
    },
  };
}
