/**
 * What a person does with a child on another machine, for the place tests (SSH hosts, containers): attach on a
 * real terminal and detach again, read `muster top` as it draws, and watch (and type into) its pane from the
 * web page's terminal.
 */

import { spawn } from "node:child_process";
import { render } from "ink-testing-library";
import pty from "node-pty";
import { createElement } from "react";
import { WebSocket } from "ws";
import { createMuster } from "../../src/index.js";
import { coreActions } from "../../src/tui/actions.js";
import { Top } from "../../src/tui/app.js";
import { TopSource } from "../../src/tui/source.js";
import { BIN, type Sandbox, until } from "./cli.js";

/** Runs `muster attach <id>` on a real terminal until `shows` is on it, then detaches (tmux prefix, d); its exit code. */
export async function attachAndDetach(sb: Sandbox, id: string, shows: string): Promise<number> {
  const term = pty.spawn(process.execPath, [BIN, "attach", id], {
    cols: 120,
    rows: 30,
    cwd: sb.cwd,
    env: sb.env as Record<string, string>,
  });
  let out = "";
  term.onData((d) => {
    out += d;
  });
  const exit = new Promise<number>((resolve) => term.onExit((e) => resolve(e.exitCode)));
  try {
    await until(() => out.includes(shows), 20_000);
    term.write("\x02d");
    return await exit;
  } finally {
    term.kill();
  }
}

/** `muster top` drawn for the sandbox's primary: its frame as a person reads it, and a child's row. */
export interface TopView {
  frame(): string;
  row(id: string): string | undefined;
}

/** Draws `muster top` while `look` runs, then closes it. */
export async function withTop(sb: Sandbox, look: (view: TopView) => Promise<void>): Promise<void> {
  const m = createMuster({ env: sb.env, cwd: sb.cwd });
  const source = new TopSource(m, { minIntervalMs: 200 });
  try {
    const ui = render(
      createElement(Top, { source, actions: coreActions(m), size: { columns: 120, rows: 60 } }),
    );
    // What a person reads: the frame without its escape sequences.
    const frame = () => (ui.lastFrame() ?? "").replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
    const row = (id: string) =>
      frame()
        .split("\n")
        .find((l) => l.includes(id.slice(-8)));
    try {
      await look({ frame, row });
    } finally {
      ui.unmount();
    }
  } finally {
    await source.close();
  }
}

/**
 * `muster web` for the sandbox, and one child's pane through the page's terminal socket (what the browser's
 * xterm.js gets): waits until `shows` is on it; with `type`, opens it taking input, types that line and
 * waits until the child has one turn more. Stops the server.
 */
export async function viewInWeb(
  sb: Sandbox,
  id: string,
  shows: string,
  type?: string,
): Promise<{ text: string }> {
  const server = spawn(process.execPath, [BIN, "web", "--listen", "127.0.0.1:0"], {
    cwd: sb.cwd,
    env: sb.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let said = "";
  server.stderr!.on("data", (d: Buffer) => {
    said += d.toString();
  });
  const exited = new Promise((r) => server.once("exit", r));
  let ws: WebSocket | undefined;
  try {
    const m = await until(() => /127\.0\.0\.1:(\d+)\/\?token=(\S+)/.exec(said), 15_000);
    const q = `cols=120&rows=30&input=${type ? 1 : 0}`;
    ws = new WebSocket(`ws://127.0.0.1:${m[1]}/api/children/${id}/terminal?${q}`, {
      headers: { authorization: `Bearer ${m[2]}` },
    });
    let text = "";
    ws.on("message", (d: Buffer, binary: boolean) => {
      text += binary ? d.toString("utf8") : `\n[server: ${d.toString()}]\n`;
    });
    await until(() => text.includes(shows), 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; the terminal showed: ${text.slice(-800)}; the server said: ${said}`);
    });
    if (type) {
      const before = (await sb.json(["status", id])).data.turns as number;
      ws.send(JSON.stringify({ type: "input", data: `${type}\r` }));
      await until(async () => (await sb.json(["status", id])).data.turns === before + 1, 30_000);
    }
    return { text };
  } finally {
    ws?.close();
    server.kill("SIGTERM");
    await exited;
  }
}
