// Permission requests of a real agent CLI reach the parent: a child whose profile says
// `permissions: ask` runs the CLI without pre-approving the shell; the scripted endpoint asks for
// `echo hi > perm.txt`; the request shows in `muster inbox` and the child is waiting-permission; `muster allow`
// runs it, `muster deny` leaves no file and the refusal reaches the model in its next request.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { PERM_COMMAND, startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

interface Endpoint {
  url: string;
  requests: { path: string; api: string | null; body: unknown }[];
  setScenario(s: string): void;
  close(): Promise<void>;
}

/** Pi asks nothing itself: a permission-gate extension in the child's cwd confirms each bash call (ctx.ui.confirm). */
const PI_GATE = `export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return undefined;
    const ok = await ctx.ui.confirm("Run bash?", String(event.input.command));
    return ok ? undefined : { block: true, reason: "Blocked: the parent refused" };
  });
}
`;

export function definePermissionChecks(name: "claude" | "gemini" | "opencode" | "pi"): void {
  describe(
    `${name}: a permission request reaches the parent (real CLI, scripted endpoint)`,
    { timeout: 180_000 },
    () => {
      const sb = useSandbox(`mt-perm-${name}`);
      let ep: Endpoint;
      let env: NodeJS.ProcessEnv;
      const agent = `${name}-ask`;

      beforeAll(async () => {
        ep = (await startEndpoint({ scenario: "perm" })) as Endpoint;
        const tmp = path.join(sb.cwd, ".tmp");
        fs.mkdirSync(tmp, { recursive: true });
        env = {
          ...prepareCli(name, ep.url, sb.env.HOME as string),
          PATH: `${cliBinDir(name)}${path.delimiter}${sb.env.PATH}`,
          TMPDIR: tmp,
        };
        const agents = path.join(sb.cwd, ".muster", "agents");
        fs.mkdirSync(agents, { recursive: true });
        fs.writeFileSync(
          path.join(agents, `${agent}.md`),
          `---\ndescription: ${name}, asking the parent for tools\nrunner: ${name}\npermissions: ask\n---\n`,
        );
      });
      afterAll(async () => {
        await ep?.close();
      });

      /** Spawns a child that calls the shell; resolves once its permission request is in the parent's inbox. */
      const spawnAsking = async (tag: string) => {
        const cwd = path.join(sb.cwd, tag);
        fs.mkdirSync(cwd, { recursive: true });
        if (name === "pi") {
          fs.mkdirSync(path.join(cwd, ".pi", "extensions"), { recursive: true });
          fs.writeFileSync(path.join(cwd, ".pi", "extensions", "gate.ts"), PI_GATE);
        }
        const s = await sb.json(
          [
            "spawn",
            "--agent",
            name === "pi" ? "pi" : agent,
            "--model",
            TEST_MODELS[name],
            "--cwd",
            cwd,
            "make perm.txt",
          ],
          { env },
        );
        expect(s.exitCode, s.stderr).toBe(0);
        const id = s.data.id as string;
        const req = await until(
          async () => {
            const inbox = await sb.json(["inbox", "--peek"], { env });
            return inbox.data.requests?.find((r: { child: string }) => r.child === id);
          },
          120_000,
          500,
        );
        return { id, cwd, req, dir: s.data.artifactDir as string };
      };
      const waitFor = async (id: string) => {
        const r = await sb.json(["wait", id, "--timeout", "120"], { env });
        return r.data.results[0];
      };

      it("the request is in muster inbox (type permission, tool, input) while the child waits; allow runs it", async () => {
        const { id, cwd, req, dir } = await spawnAsking("allow");
        expect(req).toMatchObject({ type: "permission", choices: ["allow", "allow_always", "deny"] });
        expect(req.tool).toBeTruthy();
        expect(`${req.tool} ${req.summary ?? ""}`).toContain(PERM_COMMAND);
        expect((await sb.json(["status", id], { env })).data.live.state).toBe("waiting-permission");
        expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
        const ok = await sb.json(["allow", req.id.slice(-8)], { env });
        expect(ok.exitCode, ok.stderr).toBe(0);
        const r = await waitFor(id);
        expect(r.status, r.reason).toBe("completed");
        expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8").trim()).toBe("hi");
        expect(r.text).toMatch(/^TOOL SAID: /);
        const perms = readEvents(dir).filter((e) => e.type === "permission");
        expect(perms.map((e) => [e.state, e.requestId])).toEqual([
          ["pending", req.id],
          ["granted", req.id],
        ]);
        await sb.run(["cancel", id], { env });
      });

      // Pi's gate is an extension of the user's, not a muster setting: nothing of muster's to check one-shot.
      if (name !== "pi")
        it("one-shot (nobody to ask while it runs): the CLI refuses the call and the turn still ends", async () => {
          const cwd = path.join(sb.cwd, "oneshot");
          fs.mkdirSync(cwd, { recursive: true });
          const r = await sb.json(
            [
              "spawn",
              "--wait",
              "--timeout",
              "120",
              "--agent",
              agent,
              "--model",
              TEST_MODELS[name],
              "--cwd",
              cwd,
              "go",
            ],
            { env: { ...env, MUSTER_RUNNER_MODE: "oneshot" } },
          );
          const res = r.data.results?.[0];
          expect(res?.status, JSON.stringify(r.data)).toBe("completed");
          expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
          // The refusal reaches the model (OpenCode ends its turn on a refusal, as over ACP).
          if (name === "opencode") expect(res.text).toBe("");
          else expect(res.text).toMatch(/^TOOL SAID: /);
        });

      it("unanswered past MUSTER_PERMISSION_TIMEOUT: denied, the record says so, and the CLI goes on", async () => {
        const cwd = path.join(sb.cwd, "timeout");
        fs.mkdirSync(cwd, { recursive: true });
        if (name === "pi") {
          fs.mkdirSync(path.join(cwd, ".pi", "extensions"), { recursive: true });
          fs.writeFileSync(path.join(cwd, ".pi", "extensions", "gate.ts"), PI_GATE);
        }
        const args = [
          "--agent",
          name === "pi" ? "pi" : agent,
          "--model",
          TEST_MODELS[name],
          "--cwd",
          cwd,
          "go",
        ];
        const r = await sb.json(["spawn", "--wait", "--timeout", "120", ...args], {
          env: { ...env, MUSTER_PERMISSION_TIMEOUT: "1" },
        });
        const res = r.data.results?.[0];
        expect(res?.status, JSON.stringify(r.data)).toBe("completed");
        expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
        const denied = readEvents(res.artifactDir).filter((e) => e.type === "permission");
        expect(denied.map((e) => e.state)).toEqual(["pending", "denied"]);
        expect(denied[1].summary).toMatch(/no answer in 1 s/);
        if (name !== "opencode") expect(res.text).toMatch(/^TOOL SAID: /);
        await sb.run(["cancel", r.data.spawned.id], { env });
      });

      it("muster deny: no file, and the model's next request carries the refusal", async () => {
        const { id, cwd, req, dir } = await spawnAsking("deny");
        const before = ep.requests.length;
        expect((await sb.json(["deny", req.id], { env })).exitCode).toBe(0);
        const r = await waitFor(id);
        expect(r.status, r.reason).toBe("completed");
        expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
        // The endpoint answers with the tool result it was sent: the CLI's own words for a refused call.
        let said = String(r.text);
        if (name === "opencode") {
          // OpenCode ends the turn on a refusal (an ACP answer carries no message): the model reads the refused
          // call in the next turn's request.
          expect(said).toBe("");
          const two = await sb.json(["send", id, "--wait", "--timeout", "120", "go on"], { env });
          said = String(two.data.results?.[0]?.text);
        }
        expect(ep.requests.length).toBeGreaterThan(before);
        const last = () =>
          JSON.stringify(ep.requests.filter((q) => q.api !== null).at(-1)?.body).slice(0, 3000);
        expect(said, last()).toMatch(/^TOOL SAID: /);
        expect(said, last()).toMatch(/den(y|ied)|reject|refus|not allowed|permission|cancel|block/i);
        const perms = readEvents(dir).filter((e) => e.type === "permission");
        expect(perms.map((e) => e.state)).toEqual(["pending", "denied"]);
        await sb.run(["cancel", id], { env });
      });
    },
  );
}
