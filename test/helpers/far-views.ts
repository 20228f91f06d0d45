/**
 * What a person does with a child on another machine, for the place tests (SSH hosts, containers): attach on a
 * real terminal and detach again, and read `muster top` as it draws.
 */

import { render } from "ink-testing-library";
import pty from "node-pty";
import { createElement } from "react";
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
