import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";
import { discoverProfiles } from "../../src/profiles/index.js";

/** A temp dir for one test file, removed after its tests. */
export function tempBase(prefix: string): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
  return base;
}

let n = 0;
/** A fresh fake HOME, XDG_CONFIG_HOME and cwd under `base` (the real home is never read); helpers write files there. */
export function world(base: string) {
  const root = path.join(base, `w${n++}`);
  const home = path.join(root, "home");
  const xdg = path.join(root, "xdg");
  const cwd = path.join(root, "work");
  for (const d of [home, xdg, cwd]) fs.mkdirSync(d, { recursive: true });
  const env: NodeJS.ProcessEnv = { HOME: home, XDG_CONFIG_HOME: xdg };
  const write = (file: string, text: string): string => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  return {
    home,
    xdg,
    cwd,
    env,
    write,
    project: (rel: string, text: string) => write(path.join(cwd, ".muster", "agents", rel), text),
    user: (rel: string, text: string) => write(path.join(xdg, "muster", "agents", rel), text),
    discover: (compat?: boolean) =>
      discoverProfiles({ cwd, env, config: {}, ...(compat !== undefined ? { compat } : {}) }),
  };
}

/** A profile file: frontmatter lines and a body. */
export const md = (front: string, body = "Prompt body.") => `---\n${front}\n---\n${body}\n`;
