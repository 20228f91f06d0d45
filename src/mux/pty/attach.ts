/**
 * `muster attach` for a pty pane: connects this terminal to the pane's holder, raw. The scrollback is
 * replayed first, then output streams; keys go to the program, size changes follow the terminal. The
 * detach key (Ctrl-\ unless MUSTER_DETACH_KEY names another, as `^]` or `C-]`) leaves the pane running.
 * Run as `node attach.js <socket> <pane id> [holder pid]`; a socket that is not the holder's is refused.
 */
import { createConnection } from "node:net";
import { requireSetting } from "../../base/settings/resolve.js";
import { detachByte } from "./keys.js";
import { encodeFrame, FRAME, type Frame, FrameReader, jsonFrame, parseJson } from "./protocol.js";
import { checkHolderPid, checkHolderSocket } from "./socket-check.js";

function main(): void {
  const [socket, label = "pane", pidArg] = process.argv.slice(2);
  const holderPid = pidArg !== undefined && /^\d+$/.test(pidArg) ? Number(pidArg) : undefined;
  let detach: number;
  try {
    detach = detachByte(requireSetting(process.env, "detachKey"));
  } catch (e) {
    process.stderr.write(`muster attach: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (!socket) {
    process.stderr.write("usage: attach.js <socket> [pane id]\n");
    process.exit(2);
  }
  const stdin = process.stdin;
  const out = process.stdout;
  const size = () => ({ cols: out.columns || 80, rows: out.rows || 24 });
  try {
    checkHolderSocket(socket, label);
  } catch (e) {
    process.stderr.write(`muster attach: ${(e as Error).message}\n`);
    process.exit(1);
  }
  const sock = createConnection(socket);
  const reader = new FrameReader();
  let raw = false;
  let finished = false;

  const finish = (code: number, message: string) => {
    if (finished) return;
    finished = true;
    if (raw && stdin.isTTY) stdin.setRawMode(false);
    // Leave the program's modes behind: show the cursor, end bracketed paste and mouse reporting.
    if (raw) out.write("\x1b[?25h\x1b[?2004l\x1b[?1000l\x1b[0m\r\n");
    process.stderr.write(`${message}\n`);
    sock.destroy();
    process.exit(code);
  };

  sock.on("connect", () => sock.write(jsonFrame(FRAME.HELLO, { role: "viewer", ...size() })));
  sock.on("error", (e: NodeJS.ErrnoException) =>
    finish(
      1,
      e.code === "ENOENT" || e.code === "ECONNREFUSED"
        ? `muster attach: ${label} has exited`
        : `muster attach: ${e.message}`,
    ),
  );
  sock.on("close", () => finish(0, `[${label} closed]`));
  sock.on("data", (chunk) => {
    let frames: Frame[];
    try {
      frames = reader.push(chunk);
    } catch (e) {
      return finish(1, `muster attach: ${(e as Error).message}`);
    }
    for (const f of frames) onFrame(f);
  });

  const onFrame = (f: Frame) => {
    if (f.type === FRAME.INFO) {
      try {
        checkHolderPid(parseJson<{ pid?: number }>(f.payload) ?? {}, holderPid, label);
      } catch (e) {
        return finish(1, `muster attach: ${(e as Error).message}`);
      }
      if (stdin.isTTY) stdin.setRawMode(true);
      raw = true;
      stdin.resume();
      // A clean screen under the replay: it redraws what the pane shows.
      out.write("\x1b[H\x1b[2J");
    } else if (f.type === FRAME.REPLAY || f.type === FRAME.OUTPUT) {
      out.write(f.payload);
    } else if (f.type === FRAME.EXIT) {
      const st = parseJson<{ exitCode: number | null; signal: number | null }>(f.payload) ?? {};
      finish(0, `[${label} exited: ${st.signal ? `signal ${st.signal}` : `exit code ${st.exitCode}`}]`);
    }
  };

  stdin.on("data", (d: Buffer) => {
    if (!raw) return;
    const at = d.indexOf(detach);
    if (at < 0) return void sock.write(encodeFrame(FRAME.INPUT, d));
    if (at > 0) sock.write(encodeFrame(FRAME.INPUT, d.subarray(0, at)));
    // Flush what was typed before the detach key, then go.
    sock.end(() => finish(0, `[detached from ${label}]`));
  });
  out.on("resize", () => sock.write(jsonFrame(FRAME.RESIZE, size())));
}

main();
