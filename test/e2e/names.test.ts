import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { until, useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-names");

/** tmux's own view of a pane: its window name and pane title. */
async function paneView(paneId: string): Promise<{ window: string; title: string }> {
  // -u: without a UTF-8 locale tmux prints the tab of the format as `_`.
  const r = await execa("tmux", [
    "-u",
    "-L",
    sb.socket,
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{window_name}\t#{pane_title}",
  ]);
  const [window = "", title = ""] = r.stdout.split("\t");
  return { window, title };
}

describe("spawn --name", () => {
  it("names a child: shown in ls, status, the tmux window name and pane title; usable wherever an id is", async () => {
    const spawned = await sb.json(["spawn", "--name", "reviewer.1", "look at it"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.id as string;
    expect(spawned.data.name).toBe("reviewer.1");

    const ls = await sb.json(["ls"]);
    expect(ls.data.children.find((c: { id: string }) => c.id === id).name).toBe("reviewer.1");
    const human = (await sb.run(["ls"])).stdout.split("\n");
    expect(human[0]).toMatch(/^ID\s+NAME\s+AGENT\s+STATE/);
    expect(human.find((l) => l.startsWith(id.slice(-8)))).toMatch(/^\S+\s+reviewer\.1\s+mock\s/);

    // The name resolves like an id: status, wait, result, send, cancel.
    const st = await sb.json(["status", "reviewer.1"]);
    expect(st.exitCode, st.stderr).toBe(0);
    expect(st.data.id).toBe(id);
    expect((await sb.run(["status", "reviewer.1"])).stdout).toMatch(/^name {7}reviewer\.1$/m);
    const w = await sb.json(["wait", "reviewer.1", "--timeout", "60s"]);
    expect(w.data.results[0]).toMatchObject({ id, status: "completed" });
    expect((await sb.json(["result", "reviewer.1"])).data.id).toBe(id);

    const pane = st.data.pane.paneId as string;
    expect(await paneView(pane)).toEqual({
      window: "reviewer.1",
      title: `reviewer.1 (mock ${id.slice(-8)})`,
    });

    // The library sees it too.
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    expect((await m.status("reviewer.1")).name).toBe("reviewer.1");
    expect((await m.list()).find((c) => c.entry.id === id)?.name).toBe("reviewer.1");

    expect((await sb.run(["cancel", "reviewer.1"])).exitCode).toBe(0);
    await until(async () => (await sb.json(["status", id])).data.status === "closed", 20_000, 100);
  });

  it("a resumed child's new pane keeps its name as window name and title; an unnamed one is <agent>-<8 hex>", async () => {
    const named = (await sb.json(["spawn", "--name", "vm", "--wait", "first"])).data.spawned.id as string;
    const plain = (await sb.json(["spawn", "--wait", "first"])).data.spawned.id as string;
    expect((await sb.run(["cancel", "vm", plain])).exitCode).toBe(0);
    for (const ref of ["vm", plain]) {
      const r = await sb.json(["spawn", "--resume", ref, "--wait", "again"]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const paneOf = async (id: string) => (await sb.json(["status", id])).data.pane.paneId as string;
    expect(await paneView(await paneOf(named))).toEqual({
      window: "vm",
      title: `vm (mock ${named.slice(-8)})`,
    });
    expect((await paneView(await paneOf(plain))).window).toBe(`mock-${plain.slice(-8)}`);
  });

  it("rm calls a named child by its name", async () => {
    const id = (await sb.json(["spawn", "--name", "to-go", "--wait", "x"])).data.spawned.id as string;
    const r = await sb.run(["rm", "to-go"]);
    expect(r.stdout).toBe(`removed ${id.slice(-8)} to-go (was idle)\n`);
  });

  it("wait's headed results call a named child by its name, an unnamed one by its agent", async () => {
    const named = (await sb.json(["spawn", "--name", "headed", "one"])).data.id as string;
    const plain = (await sb.json(["spawn", "two"])).data.id as string;
    const w = await sb.run(["wait", named, plain, "--timeout", "60s"]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(w.stdout).toMatch(new RegExp(`^── ${named.slice(-8)} · headed · completed`, "m"));
    expect(w.stdout).toMatch(new RegExp(`^── ${plain.slice(-8)} · mock · completed`, "m"));
    expect((await sb.json(["result", "headed"])).data).toMatchObject({ id: named, name: "headed" });
  });

  it("a clash, a bad name or a name with --resume: one-line error, exit 2, nothing created", async () => {
    const first = await sb.json(["spawn", "--name", "twin", "one"]);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = (await sb.json(["ls"])).data.children.length;
    for (const [args, msg] of [
      [["spawn", "--name", "twin", "two"], /name "twin" is taken by child/],
      [["spawn", "--name", "../x", "two"], /invalid name "\.\.\/x"/],
      [["spawn", "--name", "-rf", "two"], /invalid name|argument missing|unknown option/],
      [["spawn", "--name", "a".repeat(33), "two"], /invalid name/],
      [["spawn", "--name", "cafe", "two"], /would read as a child id/],
      [["spawn", "--name", "", "two"], /invalid name/],
      [["spawn", "--resume", "twin", "--name", "other", "two"], /no --name/],
    ] as const) {
      const r = await sb.run([...args]);
      expect(r.exitCode, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
    const unknown = await sb.run(["status", "nobody"]);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(/no child of this primary is named "nobody"/);
    await sb.run(["cancel", "twin"]);
  });

  it("two spawns racing for one name: exactly one gets it", async () => {
    const runs = await Promise.all([1, 2, 3].map((i) => sb.json(["spawn", "--name", "race", `try ${i}`])));
    expect(runs.filter((r) => r.exitCode === 0)).toHaveLength(1);
    const named = (await sb.json(["ls"])).data.children.filter((c: { name?: string }) => c.name === "race");
    expect(named).toHaveLength(1);
    await sb.run(["cancel", "race"]);
  });

  it("MCP subagents_run takes a name; subagents_status shows it and resolves it", async () => {
    const client = await connectMcp(sb);
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        const text = (r.content as { text: string }[])[0]!.text;
        return { isError: !!r.isError, text, data: r.isError ? undefined : JSON.parse(text) };
      };
      const run = await call("subagents_run", { prompt: "via mcp", name: "mcp-child" });
      expect(run.isError).toBe(false);
      const st = await call("subagents_status", { id: "mcp-child" });
      expect(st.data).toMatchObject({ id: run.data.id, name: "mcp-child" });
      const clash = await call("subagents_run", { prompt: "again", name: "mcp-child", await: false });
      expect(clash.isError).toBe(true);
      expect(clash.text).toMatch(/name "mcp-child" is taken/);
    } finally {
      await client.close();
    }
  });
});
