/**
 * `muster top --popup` and `muster tmux-keys`: a real tmux client (`tmux attach` of a private server, in a
 * pane of another private server, which is its terminal), so the popup is drawn where capture-pane of the
 * outer pane sees it, and keys typed into that pane reach it.
 */
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";
import { attachedClient, killServerAndWait, privateSocket } from "../helpers/tmux.js";

const sb = useSandbox("mt-toppop");
const outer = privateSocket("mt-toppop-o");
const inner = privateSocket("mt-toppop-i");
const tmux = async (socket: string, args: string[]) =>
  String((await execa("tmux", ["-L", socket, ...args], { reject: false, stdin: "ignore" })).stdout);
/** What the person sees: the inner client's terminal, popups included. */
const seen = () => tmux(outer, ["capture-pane", "-p", "-t", "o"]);
let insideEnv: NodeJS.ProcessEnv;
let child = "";

beforeAll(async () => {
  // Started from a CI job, as CI runs this: top must still draw live (ink draws nothing where it sees CI).
  const env = { ...sb.env, CI: "true" };
  insideEnv = {
    ...(await attachedClient(outer, inner, { env, inner: [120, 36], outer: [120, 36], cwd: sb.cwd })),
  };
  child = (await sb.json(["spawn", "--agent", "mock", "mock: sleep=120 tools=60\nwatched from a popup"])).data
    .id;
}, 60_000);

afterAll(async () => {
  await sb.run(["cancel", child]);
  for (const s of [outer, inner]) await killServerAndWait(s);
});

describe("top in a tmux popup", () => {
  it("top --popup shows the tree over the current pane; q closes it and the command returns", async () => {
    const run = sb.run(["top", "--popup"], { env: insideEnv });
    await until(async () => (await seen()).includes(child.slice(-8)), 20_000);
    expect(await seen()).toMatch(/muster top · primary/);
    await tmux(outer, ["send-keys", "-t", "o", "q"]);
    const r = await run;
    expect(r.exitCode).toBe(0);
    await until(async () => !(await seen()).includes(child.slice(-8)));
    expect((await sb.json(["status", child])).data.status).toBe("running");
  });

  it("top --popup outside tmux says it needs a client, and top without a terminal refuses; exit non-zero", async () => {
    const r = await sb.run(["top", "--popup"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/a popup needs a tmux client/);
    // Without a terminal, top itself refuses in one line rather than drawing into a pipe.
    const plain = await sb.run(["top"]);
    expect(plain.exitCode).not.toBe(0);
    expect(plain.stderr).toMatch(/muster top needs a terminal/);
  });

  it("tmux-keys prints the binding; --install binds prefix + M in the running server, which opens top", async () => {
    const printed = await sb.run(["tmux-keys"]);
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout).toMatch(
      /^bind-key M display-popup -E -w 90% -h 90% -d '#\{pane_current_path\}' -- /m,
    );
    expect(printed.stdout).toMatch(/muster\.js top$/m);
    // A shell's own primary (a child's pane has one) is not baked in: each pane's directory decides.
    const fromChild = await sb.run(["tmux-keys"], {
      env: { MUSTER_PRIMARY: "0192f000-0000-7000-8000-000000000001" },
    });
    expect(fromChild.exitCode, fromChild.stderr).toBe(0);
    expect(fromChild.stdout).not.toContain("MUSTER_PRIMARY");
    expect(fromChild.stdout).toContain("MUSTER_HOME=");
    // Nothing was bound by printing.
    expect(await tmux(inner, ["list-keys", "-T", "prefix", "M"])).not.toContain("display-popup");

    const bad = await sb.run(["tmux-keys", "--key", "M; kill-server"]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/not a plain key/);
    expect((await sb.run(["tmux-keys", "--install"])).stderr).toMatch(/not inside tmux/);

    const installed = await sb.run(["tmux-keys", "--install"], { env: insideEnv });
    expect(installed.exitCode).toBe(0);
    expect(await tmux(inner, ["list-keys", "-T", "prefix", "M"])).toContain("display-popup");
    // The person presses prefix + M: top opens in a popup (in the pane's directory, with this state root).
    await tmux(outer, ["send-keys", "-t", "o", "C-b", "M"]);
    await until(async () => (await seen()).includes(child.slice(-8)), 20_000);
    await tmux(outer, ["send-keys", "-t", "o", "q"]);
    await until(async () => !(await seen()).includes(child.slice(-8)), 10_000);
  });
});
