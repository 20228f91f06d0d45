/**
 * Worktree set-up for a child on an SSH host (a real sshd test host in namespaces of its own,
 * test/helpers/ssh-hosts.ts): the files `.muster/worktree-include` lists travel as a tarball into the clone
 * there, and `.muster/worktree-setup` runs there (its bytes carried, run by muster's far side, bounded there)
 * before the child's first turn; a failing one refuses the spawn and leaves nothing there or here. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlDirFor } from "../../src/place/ssh/place.js";
import { readEvents, sandbox } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import { cancelAndStopKeeper } from "../helpers/place-keeper.js";
import { existsOn, type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const sb = sandbox("mt-sshwts");
let base = "";
let host: SshTestHost | undefined;

/** A checkout with `.env` (untracked, 0600) and the two `.muster/` files; `setup` is the script's text. */
function checkout(name: string, setup: string) {
  const repo = makeRepo(path.join(sb.cwd, name));
  fs.mkdirSync(path.join(repo.dir, ".muster"));
  fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-include"), ".env\n");
  fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-setup"), setup, { mode: 0o755 });
  fs.writeFileSync(path.join(repo.dir, ".env"), "TOKEN=far\n", { mode: 0o600 });
  return repo;
}

describe.skipIf(!available.ok && !process.env.CI)("worktree set-up on an SSH host", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-sshwts-"));
    host = startSshHost(base, "h1");
    const added = await sb.run([
      "hosts",
      "add",
      "h1",
      "h1",
      "--ssh-config",
      host.config,
      "--workdir",
      "/root",
    ]);
    expect(added.exitCode, added.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await cancelAndStopKeeper(sb, "ssh:h1");
    host?.stop();
    expect(await sb.cleanup()).toEqual([]);
    if (base) fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(controlDirFor(sb.home), { recursive: true, force: true });
  }, 60_000);

  it("the included file and what the set-up makes are in the worktree there before the child's first turn", async () => {
    const repo = checkout(
      "repo-ok",
      [
        "#!/bin/sh",
        "set -e",
        'echo "for $MUSTER_CHILD_ID in $MUSTER_WORKTREE: $(cat .env) on $(hostname)" > generated.txt',
        "echo set up there",
      ].join("\n"),
    );
    const spawned = await sb.run([
      ...["spawn", "--on", "h1", "--isolation", "worktree", "--cwd", repo.dir, "--name", "far-setup"],
      // Its acceptance check runs there too, and needs what the set-up made.
      ...["--verify", 'grep -q "on $(hostname)" generated.txt && hostname'],
      ...["--agent", "command", "--wait", "--json", "work", "--", "sh", "-c", "cat generated.txt"],
    ]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const result = JSON.parse(spawned.stdout).results[0];
    expect(result.verified).toMatchObject({ exitCode: 0, attempts: 1, outputTail: "h1\n" });
    spawned.stdout = result.text;
    const st = (await sb.json(["status", "far-setup"])).data;
    const id = st.id as string;
    const far = `/root/.local/state/muster/worktrees/${id}`;
    // The child's first turn read the set-up's file, made on the host from the carried .env.
    expect(spawned.stdout).toContain(`for ${id} in ${far}: TOKEN=far on h1`);
    expect(host!.inside(["stat", "-c", "%a", `${far}/.env`]).trim()).toBe("600");
    // The script's copy went again; nothing of this machine's checkout is there.
    expect(host!.inside(["ls", "-A", `${far}/.git`])).not.toMatch(/muster-worktree-setup/);
    expect(existsOn(host!, repo.dir)).toBe(false);
    // Its record is the first of the log (written there, mirrored here).
    const events = readEvents(st.artifactDir);
    expect(events[0]).toMatchObject({
      type: "worktree_setup",
      seq: 1,
      included: { files: 1, bytes: 10 },
      script: ".muster/worktree-setup",
      exitCode: 0,
      outputTail: "set up there\n",
    });
    expect(events[1]).toMatchObject({ type: "child_started" });
  }, 90_000);

  it("a set-up failing there refuses the spawn with its output; nothing is left there or here", async () => {
    const repo = checkout(
      "repo-bad",
      "#!/bin/sh\necho 'no compiler on this host' >&2\ntouch half-made\nexit 4\n",
    );
    const before = (await sb.json(["ls"])).data.children.length;
    const r = await sb.run([
      ...["spawn", "--on", "h1", "--isolation", "worktree", "--cwd", repo.dir, "--name", "far-bad"],
      ...["--agent", "command", "work", "--", "true"],
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /worktree-setup failed \(exit 4\): nothing was created; the end of its output:\n {2}│ no compiler on this host\n$/,
    );
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
    expect(repo.git("branch", "--list", "muster/*").trim()).toBe("");
    expect(
      host!.inside(["ls", "-A", "/root/.local/state/muster/worktrees"]).trim().split("\n").filter(Boolean),
    ).toHaveLength(1);
  }, 90_000);
});
