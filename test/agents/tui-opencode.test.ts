import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { PERM_COMMAND, startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { readEvents, until, useSandbox } from "../helpers/cli.js";
import { defineTuiChecks } from "./tui-checks.js";

defineTuiChecks("opencode", {
  // OpenCode's session ids are `ses_…`.
  sessionId: /^ses_[A-Za-z0-9]+$/,
  // Its TUI interrupts a turn on the second Escape ("esc again to interrupt").
  escapeKeys: ["Escape", "Escape"],
  // A new session's title request offers no tools; the turn's own request does.
  turnRequest: (body) => ((body as { tools?: unknown[] })?.tools?.length ?? 0) > 0,
});

// OpenCode only: its permission prompt, reported by muster's plugin (permission.asked), for a person to answer.
describe("opencode in mode tui: a permission prompt", { timeout: 240_000 }, () => {
  const sb = useSandbox("mt-tui-opencode-perm");
  let ep: { url: string; setScenario(s: string): void; close(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    ep = await startEndpoint();
    fs.mkdirSync(path.join(sb.cwd, ".tmp"), { recursive: true });
    env = {
      ...prepareCli("opencode", ep.url, sb.env.HOME as string),
      PATH: `${cliBinDir("opencode")}${path.delimiter}${sb.env.PATH}`,
      TMPDIR: path.join(sb.cwd, ".tmp"),
    };
  });
  afterAll(async () => {
    await ep?.close();
  });

  it("a shell call the profile does not pre-approve waits as waiting-permission until a person allows it", async () => {
    fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "opencode-ask.md"),
      "---\ndescription: opencode in its TUI, asking for the shell\nrunner: opencode\nmode: tui\npermissions: ask\n---\n",
    );
    ep.setScenario("perm");
    const cwd = path.join(sb.cwd, "perm");
    fs.mkdirSync(cwd);
    const s = await sb.json(
      [
        "spawn",
        "--agent",
        "opencode-ask",
        "--model",
        TEST_MODELS.opencode as string,
        "--cwd",
        cwd,
        "make it",
      ],
      { env },
    );
    expect(s.exitCode, s.stderr).toBe(0);
    const st = await until(
      async () => {
        const x = await sb.json(["status", s.data.id], { env });
        return x.data.live?.state === "waiting-permission" ? x.data : undefined;
      },
      150_000,
      500,
    );
    expect(st.live.detail).toContain("bash");
    expect(st.live.detail).toContain(PERM_COMMAND);
    expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
    // The person allows it once (the dialog's first choice).
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.data.paneId, "Enter"]);
    const w = await sb.json(["wait", s.data.id, "--timeout", "60"], { env, timeout: 90_000 });
    expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
    expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8").trim()).toBe("hi");
    const perms = readEvents(s.data.artifactDir).filter((e) => e.type === "permission");
    expect(perms.map((p) => `${p.state}:${p.tool}`)).toEqual(["pending:bash", "granted:bash"]);
    await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
  });
});
