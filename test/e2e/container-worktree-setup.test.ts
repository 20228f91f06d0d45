/**
 * Worktree set-up for a child in a container of its own, in a private Docker engine
 * (test/helpers/docker-engine.ts) with the image `muster image build` makes from this machine's files: the
 * included file goes into the clone in the container, the set-up runs there before the first turn, and a
 * failing one refuses the spawn and removes the container made for it. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, sandbox } from "../helpers/cli.js";
import { type DockerEngine, dockerAvailable, startDockerEngine } from "../helpers/docker-engine.js";
import { makeRepo } from "../helpers/git-repo.js";
import { stopPlacedChildren } from "../helpers/place-keeper.js";

const available = dockerAvailable();
const sb = sandbox("mt-ctrwts");
let base = "";
let engine: DockerEngine | undefined;

function checkout(name: string, setup: string) {
  const repo = makeRepo(path.join(sb.cwd, name));
  fs.mkdirSync(path.join(repo.dir, ".muster"));
  fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-include"), ".env\n");
  fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-setup"), setup, { mode: 0o755 });
  fs.writeFileSync(path.join(repo.dir, ".env"), "TOKEN=boxed\n");
  return repo;
}

const containers = () => engine!.docker(["ps", "-a", "--format", "{{.Names}}"]).split("\n").filter(Boolean);

describe.skipIf(!available.ok && !process.env.CI)("worktree set-up in a container (docker)", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
    engine = await startDockerEngine(base);
    Object.assign(sb.env, engine.env);
    const built = await sb.json(["image", "build"], { timeout: 300_000 });
    expect(built.exitCode, built.stderr).toBe(0);
  }, 360_000);

  afterAll(async () => {
    await stopPlacedChildren(sb);
    await engine?.stop();
    expect(await sb.cleanup()).toEqual([]);
    if (base) fs.rmSync(base, { recursive: true, force: true });
  }, 90_000);

  it("the set-up runs in the clone in the container before the first turn; the child sees what it made", async () => {
    const repo = checkout(
      "repo-ok",
      '#!/bin/sh\necho "made from $(cat .env) for $MUSTER_CHILD_ID" > made.txt\n',
    );
    const r = await sb.run([
      ...["spawn", "--in", "container", "--isolation", "worktree", "--cwd", repo.dir, "--name", "boxed"],
      ...["--agent", "command", "--wait", "work", "--", "sh", "-c", "cat made.txt"],
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const st = (await sb.json(["status", "boxed"])).data;
    expect(r.stdout).toContain(`made from TOKEN=boxed for ${st.id}`);
    expect(readEvents(st.artifactDir)[0]).toMatchObject({
      type: "worktree_setup",
      included: { files: 1, bytes: 12 },
      exitCode: 0,
    });
  }, 120_000);

  it("a failing set-up refuses the spawn with its output and leaves no container, branch or child", async () => {
    const before = containers().length;
    const kids = (await sb.json(["ls"])).data.children.length;
    const repo = checkout("repo-bad", "#!/bin/sh\necho 'cannot set up in a box' >&2\nexit 7\n");
    const r = await sb.run([
      ...["spawn", "--in", "container", "--isolation", "worktree", "--cwd", repo.dir],
      ...["--agent", "command", "work", "--", "true"],
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /worktree-setup failed \(exit 7\): nothing was created; the end of its output:\n {2}│ cannot set up in a box\n$/,
    );
    expect(containers()).toHaveLength(before);
    expect((await sb.json(["ls"])).data.children.length).toBe(kids);
    expect(repo.git("branch", "--list", "muster/*").trim()).toBe("");
  }, 120_000);
});
