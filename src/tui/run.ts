import { render } from "ink";
import { createElement } from "react";
import type { Muster } from "../core/muster.js";
import { coreActions } from "./actions.js";
import { Top } from "./app.js";
import { type SourceOptions, TopSource } from "./source.js";

// The alternate screen: top draws full-screen and leaves the shell's screen as it was when it quits.
const ENTER_ALT = "\x1b[?1049h\x1b[H";
const LEAVE_ALT = "\x1b[?1049l";

/** Runs `muster top` on this terminal until q/Esc; quitting never touches a child. */
export async function runTop(m: Muster, opts: SourceOptions = {}): Promise<void> {
  const source = new TopSource(m, opts);
  const out = process.stdout;
  const props = { source, actions: coreActions(m) };
  out.write(ENTER_ALT);
  const app = render(createElement(Top, props), { maxFps: 10 });
  try {
    await app.waitUntilExit();
  } finally {
    await source.close();
    out.write(LEAVE_ALT);
  }
}
