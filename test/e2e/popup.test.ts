/**
 * popup(ref | argv): tmux display-popup over a real client (a tmux client attached to a private server,
 * itself running in a pane of another private server); a backend without popups says so.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMuster, loadBackendModules } from "../../src/index.js";
import { createTmuxBackend } from "../../src/mux/tmux/backend.js";
import { REPO, until, useSandbox } from "../helpers/cli.js";
import { attachedClient, killServerAndWait, privateSocket } from "../helpers/tmux.js";

const outer = privateSocket("mt-pop-o");
const inner = privateSocket("mt-pop-i");
const kids = privateSocket("mt-pop-k");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-pop-"));
const tmux = async (socket: string, args: string[]) =>
  String((await execa("tmux", ["-L", socket, ...args], { reject: false, stdin: "ignore" })).stdout);
/** The caller's environment inside the inner server's pane: TMUX and TMUX_PANE name the client's server. */
let insideEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  // A real client: `tmux attach` of the inner server, running on a terminal (a pane of the outer server).
  insideEnv = {
    ...env,
    ...(await attachedClient(outer, inner, { env, inner: [100, 30], outer: [120, 40] })),
  };
});

afterAll(async () => {
  for (const s of [kids, outer, inner]) await killServerAndWait(s);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("popup", () => {
  it("tmux: runs an argv in a popup over the caller's client", async () => {
    const file = path.join(dir, "ran; here");
    await createTmuxBackend(insideEnv).popup({ argv: ["touch", file] });
    await until(() => fs.existsSync(file));
  });

  it("tmux: shows a child's pane (another server's) by attaching to it inside the popup", async () => {
    const b = createTmuxBackend({ ...insideEnv, MUSTER_TMUX_SOCKET: kids });
    const ref = await b.spawn({ argv: ["cat"], cwd: dir, name: "child" });
    expect((await tmux(kids, ["list-clients"])).trim()).toBe("");
    const shown = b.popup({ pane: ref }, { title: "child" });
    const client = await until(async () =>
      (await tmux(kids, ["list-clients", "-F", "#{client_name}"])).trim(),
    );
    // The popup is open as long as its client is attached; detaching closes it (-E) and popup() returns.
    await tmux(kids, ["detach-client", "-t", client]);
    await shown;
  });

  it("tmux: outside tmux there is no client to show a popup on", async () => {
    const env = { ...insideEnv };
    delete env.TMUX;
    delete env.TMUX_PANE;
    await expect(createTmuxBackend(env).popup({ argv: ["true"] })).rejects.toThrow(
      /a popup needs a tmux client/,
    );
  });
});

describe("popup on a backend without popups", () => {
  const sb = useSandbox("mt-pop");
  it("Muster.popup of a child of the process backend (test/fixtures) says the backend has none", async () => {
    const env = {
      ...sb.env,
      MUSTER_BACKEND_MODULE: path.join(REPO, "test", "fixtures", "process-backend.mjs"),
    };
    await loadBackendModules(env);
    const m = createMuster({ env, cwd: sb.cwd });
    const c = await m.spawn({ agent: "mock", prompt: "hello", backend: "process" });
    await expect(m.popup({ id: c.id })).rejects.toThrow(/the process backend has no popups/);
    await m.wait([c.id], { timeoutMs: 20_000 });
    await m.cancel(c.id);
  });
});
