/**
 * The Agent Client Protocol as a session driver: `initialize`, `session/new` or `session/load`, then a
 * `session/prompt` per turn whose `session/update`s stream the turn; `session/cancel` interrupts.
 */
import { obj, str, toolSummary } from "../common/shared.js";
import type { AgentMessage, SessionDriver, SessionIo, SessionSpec } from "../types.js";
import { authHint, authMethods, methodFor, needsAuth } from "./auth.js";
import { RpcError, RpcPeer } from "./rpc.js";
import { applySettings, readOffer } from "./session-setup.js";
import {
  type AcpTurnReader,
  acpProviderError,
  acpTurnReader,
  errorMessage,
  failureOf,
  toolName,
} from "./updates.js";

// The answer to a permission request once the turn is being cancelled (the protocol asks for exactly this).
const CANCELLED = { outcome: { outcome: "cancelled" } };

export function acpDriver(spec: SessionSpec, io: SessionIo): SessionDriver {
  let sessionId: string | undefined;
  let turn: { reader: AcpTurnReader; onMessage: (m: AgentMessage) => void; cancelling?: boolean } | undefined;
  // Permission requests waiting for the parent: each resolves its response (early, on a cancel).
  const asking = new Set<(response: unknown) => void>();
  const peer = new RpcPeer((line) => io.write(line), {
    notification(method, params) {
      if (method !== "session/update") return;
      const p = obj(params);
      // Updates outside a turn (the history a session/load replays) are not any turn's.
      if (!turn || p.sessionId !== sessionId) return;
      for (const m of turn.reader.update(p.update)) turn.onMessage(m);
    },
    async request(method, params) {
      if (method === "session/request_permission") {
        const t = turn;
        if (t?.cancelling) return CANCELLED;
        return new Promise((resolve, reject) => {
          asking.add(resolve);
          permission(params, io, (tool) => {
            if (!t?.cancelling) t?.reader.denied(tool);
          })
            .then(resolve, reject)
            .finally(() => asking.delete(resolve));
        });
      }
      throw new RpcError(-32601, `muster does not offer ${method}`);
    },
  });
  return {
    line: (text) => peer.line(text),
    async open() {
      const init = obj(
        await peer.request("initialize", {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        }),
      );
      const canLoad = obj(init.agentCapabilities).loadSession === true;
      const authed = withAuth(init, spec.env, (m, p) => peer.request(m, p));
      const params = { cwd: spec.cwd, mcpServers: [] };
      let opened: unknown;
      if (spec.resume && canLoad) {
        try {
          opened = await authed("session/load", { ...params, sessionId: spec.resume });
          sessionId = spec.resume;
        } catch (e) {
          if (!(e instanceof RpcError)) throw e;
          // Some agents advertise loadSession and still refuse (gemini 0.61): a new session gets the transcript.
          io.info(
            `the agent could not reload its session (${errorMessage(e.message, e.data)}): a new session continues from muster's transcript`,
          );
        }
      } else if (spec.resume)
        io.info("this agent cannot reload a session: a new session continues from muster's transcript");
      if (!sessionId) {
        opened = await authed("session/new", params);
        sessionId = str(obj(opened).sessionId);
        if (!sessionId) throw new Error("the agent opened no session");
      }
      const info = await applySettings((m, p) => peer.request(m, p), sessionId, readOffer(opened), spec);
      io.opened?.(info);
      return sessionId;
    },
    async prompt(text, onMessage) {
      const reader = acpTurnReader();
      turn = { reader, onMessage };
      try {
        const response = await peer.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        for (const m of reader.end(response)) onMessage(m);
      } catch (e) {
        for (const m of reader.failed(failureOf(e), acpProviderError(e))) onMessage(m);
      } finally {
        turn = undefined;
      }
    },
    interrupt() {
      if (!turn) return;
      turn.cancelling = true;
      peer.notify("session/cancel", { sessionId });
      // Once it has sent session/cancel, the client answers every pending permission request `cancelled`.
      for (const answer of asking) answer(CANCELLED);
      asking.clear();
    },
    close: (why) => peer.close(why),
  };
}

/**
 * A session request that authenticates first when the agent asks for it: once, with the method whose
 * environment variable the child has; without one, the error says which the agent would take.
 */
function withAuth(
  init: unknown,
  env: Record<string, string>,
  request: (method: string, params: unknown) => Promise<unknown>,
): (method: string, params: unknown) => Promise<unknown> {
  return async (method, params) => {
    try {
      return await request(method, params);
    } catch (e) {
      if (!needsAuth(e)) throw e;
      const methods = authMethods(init);
      const chosen = methodFor(methods, env);
      if (!chosen) throw new Error(authHint(methods, (e as RpcError).message));
      await request("authenticate", { methodId: chosen.id }).catch((a: Error) => {
        throw new Error(`the agent refused authentication with ${chosen.id}: ${a.message}`);
      });
      return request(method, params);
    }
  };
}

/**
 * A permission request goes to the parent, named like the call's tool activity (its kind; the title, often the
 * command itself, is the summary when the input says nothing); the answer picks the agent's matching option.
 */
async function permission(
  params: unknown,
  io: SessionIo,
  onDenied: (tool: string) => void,
): Promise<unknown> {
  const p = obj(params);
  const options = Array.isArray(p.options) ? p.options.map(obj) : [];
  const call = obj(p.toolCall);
  const tool = toolName(call);
  // The input's command or path says most; input that has neither (opencode's `{cwd}`) says less than the title.
  const input = call.rawInput !== undefined ? toolSummary(call.rawInput) : "";
  const title = str(call.title)?.trim();
  const titled = title && title !== tool ? toolSummary(title) : undefined;
  const summary = (input.startsWith("{") ? titled : undefined) ?? (input || titled);
  const answer = await io.askPermission(tool, summary);
  if (answer === "deny") onDenied(summary ? `${tool} ${summary}` : tool);
  const kinds =
    answer === "allow_always"
      ? ["allow_always", "allow_once"]
      : answer === "allow"
        ? ["allow_once", "allow_always"]
        : ["reject_once", "reject_always"];
  const pick = kinds.map((k) => options.find((o) => o.kind === k)).find((o) => o !== undefined);
  return pick
    ? { outcome: { outcome: "selected", optionId: pick.optionId } }
    : { outcome: { outcome: "cancelled" } };
}
