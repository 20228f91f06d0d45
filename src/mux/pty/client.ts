/** muster's side of the holder's socket: one request per connection (send, capture, resize). */
import { createConnection } from "node:net";
import { MusterError } from "../../base/errors.js";
import { FRAME, type Frame, FrameReader, jsonFrame, parseJson } from "./protocol.js";
import { checkHolderPid, checkHolderSocket } from "./socket-check.js";

/** A holder that does not answer in this long is hung (it answers in milliseconds). */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Connects as a control client, sends one request frame after HELLO and resolves with the answer frame.
 * A socket that is gone or refuses means the pane has exited: not_running. A socket that is not the holder's
 * (a link, another owner, another process behind it than `holderPid`) is refused before anything is sent.
 */
export function request(socket: string, label: string, req: Buffer, holderPid?: number): Promise<Frame> {
  return new Promise((resolve, reject) => {
    checkHolderSocket(socket, label);
    const sock = createConnection(socket);
    const reader = new FrameReader();
    let gotInfo = false;
    const done = (err: Error | null, f?: Frame) => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(f as Frame);
    };
    const timer = setTimeout(
      () => done(new MusterError("mux_unavailable", `pty pane ${label}: its holder did not answer`)),
      REQUEST_TIMEOUT_MS,
    );
    sock.on("connect", () => sock.write(jsonFrame(FRAME.HELLO, { role: "control" })));
    sock.on("data", (chunk) => {
      let frames: Frame[];
      try {
        frames = reader.push(chunk);
      } catch (e) {
        return done(e as Error);
      }
      for (const f of frames) {
        if (gotInfo) return done(null, f);
        if (f.type !== FRAME.INFO)
          return done(new MusterError("mux_unavailable", `pty pane ${label}: no greeting`));
        try {
          checkHolderPid(parseJson<{ pid?: number }>(f.payload) ?? {}, holderPid, label);
        } catch (e) {
          return done(e as Error);
        }
        // The request goes only to a holder that has said who it is.
        gotInfo = true;
        sock.write(req);
      }
    });
    sock.on("error", (e: NodeJS.ErrnoException) => {
      const gone = e.code === "ENOENT" || e.code === "ECONNREFUSED" || e.code === "EPIPE";
      done(
        gone
          ? new MusterError("not_running", `pty pane ${label} has exited`)
          : new MusterError("mux_unavailable", `pty pane ${label}: ${e.message}`, { cause: e }),
      );
    });
    sock.on("close", () => done(new MusterError("not_running", `pty pane ${label} has exited`)));
  });
}

/** An ACK frame's error as a MusterError; nothing when it says ok. */
export function checkAck(f: Frame, label: string): void {
  const ack = f.type === FRAME.ACK ? parseJson<{ ok: boolean; error: string }>(f.payload) : null;
  if (ack?.ok) return;
  throw new MusterError("not_running", `pty pane ${label}: ${ack?.error ?? "unexpected answer"}`);
}
