/**
 * JSON-RPC 2.0 over newline-delimited JSON (the Agent Client Protocol's stdio transport): requests with ids,
 * notifications, and requests from the other side answered by a handler. Transport-agnostic: lines in, lines out.
 */

/** An error the other side returned for one of our requests. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

export interface RpcHandlers {
  /** A request from the other side; its value (or thrown RpcError) is the response. */
  request(method: string, params: unknown): Promise<unknown>;
  notification(method: string, params: unknown): void;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

export class RpcPeer {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: Error | undefined;

  constructor(
    private readonly write: (line: string) => void,
    private readonly handlers: RpcHandlers,
    /** requireVersion false: messages without `"jsonrpc": "2.0"` are taken too (codex app-server omits it). */
    private readonly opts: { requireVersion?: boolean } = {},
  ) {}

  request(method: string, params: unknown): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.closedWith) this.send({ jsonrpc: "2.0", method, params });
  }

  /** One line from the other side. Returns false when it was not JSON-RPC (the caller shows it as is). */
  line(text: string): boolean {
    const t = text.trim();
    if (!t.startsWith("{")) return false;
    let m: unknown;
    try {
      m = JSON.parse(t);
    } catch {
      return false;
    }
    if (!isObject(m) || (m.jsonrpc !== "2.0" && this.opts.requireVersion !== false)) return false;
    const id = m.id;
    if (typeof m.method === "string") {
      if (id === undefined || id === null) this.handlers.notification(m.method, m.params);
      else void this.answer(id as number | string, m.method, m.params);
      return true;
    }
    if (typeof id !== "number") return true;
    const p = this.pending.get(id);
    if (!p) return true;
    this.pending.delete(id);
    if (isObject(m.error)) {
      const e = m.error;
      p.reject(
        new RpcError(typeof e.code === "number" ? e.code : -32603, String(e.message ?? "error"), e.data),
      );
    } else p.resolve(m.result);
    return true;
  }

  /** The other side is gone: every open request fails with `why`, and nothing more is sent. */
  close(why: Error): void {
    if (this.closedWith) return;
    this.closedWith = why;
    for (const p of this.pending.values()) p.reject(why);
    this.pending.clear();
  }

  private async answer(id: number | string, method: string, params: unknown): Promise<void> {
    try {
      const result = await this.handlers.request(method, params);
      this.send({ jsonrpc: "2.0", id, result: result ?? null });
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32603;
      this.send({ jsonrpc: "2.0", id, error: { code, message: (e as Error).message } });
    }
  }

  private send(message: unknown): void {
    if (this.closedWith) return;
    try {
      this.write(`${JSON.stringify(message)}\n`);
    } catch (e) {
      this.close(e as Error);
    }
  }
}
