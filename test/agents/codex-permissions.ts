// Codex app-server approvals routed to the parent: a child whose profile says `permissions: ask` runs
// its thread with approval policy `untrusted`, so the shell call the model makes becomes a `permission` request
// in `muster inbox`; `allow` runs it, `deny` sends codex's refusal back to the model. Real codex, real tmux, the
// scripted endpoint.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint, TOOL_COMMAND } from "../fixtures/llm-endpoint.mjs";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

interface Endpoint {
  url: string;
  requests: { api: string | null; body: unknown; scenario: string }[];
  setScenario(s: string): void;
  close(): Promise<void>;
}

export function defineCodexPermissionChecks(): void {
  describe("codex app-server approvals reach the parent", { timeout: 180_000 }, () => {
    const sb = useSandbox("mt-codex-perm");
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      ep = (await startEndpoint({ scenario: "tool" })) as Endpoint;
      env = {
        ...prepareCli("codex", ep.url, sb.env.HOME as string),
        PATH: `${cliBinDir("codex")}${path.delimiter}${sb.env.PATH}`,
      };
      const agents = path.join(sb.cwd, ".muster", "agents");
      fs.mkdirSync(agents, { recursive: true });
      fs.writeFileSync(
        path.join(agents, "codex-ask.md"),
        "---\ndescription: codex, asking the parent before commands\nrunner: codex\npermissions: ask\n---\n",
      );
    });
    afterAll(async () => {
      await ep?.close();
    });

    /** The child's last records, for a failure message. */
    const lastEvents = (dir: string): string => JSON.stringify(readEvents(dir).slice(-8));

    /** A child whose model asks for the scripted shell call; resolves once its request is in the inbox. */
    const spawnAsking = async (tag: string) => {
      ep.setScenario("tool");
      const cwd = path.join(sb.cwd, tag);
      fs.mkdirSync(cwd, { recursive: true });
      const args = [
        "spawn",
        "--agent",
        "codex-ask",
        "--model",
        TEST_MODELS.codex,
        "--cwd",
        cwd,
        "make the file",
      ];
      const s = await sb.json(args, { env });
      expect(s.exitCode, s.stderr).toBe(0);
      const id = s.data.id as string;
      const req = await until(async () => {
        const inbox = await sb.json(["inbox", "--peek"], { env });
        return inbox.data.requests?.find((r: { child: string }) => r.child === id);
      }, 60_000);
      return { id, cwd, req, dir: s.data.artifactDir as string };
    };

    it("a shell call waits in muster inbox as a permission request; allow runs it", async () => {
      const { id, cwd, req, dir } = await spawnAsking("allow");
      expect(req).toMatchObject({ type: "permission", tool: "shell" });
      expect(JSON.stringify(req)).toContain(TOOL_COMMAND);
      expect((await sb.json(["status", id], { env })).data.live.state).toBe("waiting-permission");
      // Nothing ran before the answer.
      expect(fs.existsSync(path.join(cwd, "out.txt"))).toBe(false);
      const ok = await sb.json(["allow", req.id], { env });
      expect(ok.exitCode, ok.stderr).toBe(0);
      const r = await sb.json(["wait", id, "--timeout", "120"], { env, timeout: 150_000 });
      expect(
        r.data.results?.[0],
        `wait said: ${JSON.stringify(r)}\nevents: ${lastEvents(dir)}`,
      ).toMatchObject({
        status: "completed",
      });
      expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8").trim()).toBe("hello");
      const perms = readEvents(dir).filter((e) => e.type === "permission");
      expect(perms.map((e) => [e.state, e.requestId])).toEqual([
        ["pending", req.id],
        ["granted", req.id],
      ]);
      await sb.run(["cancel", id], { env });
    });

    it("deny: nothing runs, and the model's next request carries codex's refusal", async () => {
      const before = ep.requests.length;
      const { id, cwd, req, dir } = await spawnAsking("deny");
      const no = await sb.json(["deny", req.id], { env });
      expect(no.exitCode, no.stderr).toBe(0);
      const r = await sb.json(["wait", id, "--timeout", "120"], { env, timeout: 150_000 });
      expect(
        r.data.results?.[0],
        `wait said: ${JSON.stringify(r)}\nevents: ${lastEvents(dir)}`,
      ).toMatchObject({
        status: "completed",
      });
      expect(fs.existsSync(path.join(cwd, "out.txt"))).toBe(false);
      const model = ep.requests.slice(before).filter((q) => q.api !== null);
      const outputs = JSON.stringify(
        ((model.at(-1)?.body as { input?: { type?: string }[] }).input ?? []).filter((i) =>
          String(i.type).endsWith("_output"),
        ),
      );
      expect(outputs).toMatch(/rejected by user/);
      await sb.run(["cancel", id], { env });
    });
  });
}
