/**
 * Worktree set-up with real git, a real tmux server on a private socket and real scripts: a checkout's
 * `.muster/worktree-include` copies untracked files into each new worktree and `.muster/worktree-setup` runs
 * there before the child's first turn; its record is the child's first event. A set-up that fails, runs too
 * long or cannot run refuses the spawn and leaves no worktree, branch, artifact dir or registry entry.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, useSandbox } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";

const sb = useSandbox("mt-wtsetup");
let n = 0;

/** A fresh checkout (one commit) with `.muster/` files as given; `setup` is written executable unless told. */
function checkout(files: {
  include?: string;
  setup?: string;
  setupMode?: number;
  extra?: Record<string, string>;
}) {
  const repo = makeRepo(path.join(sb.cwd, `repo${++n}`));
  fs.mkdirSync(path.join(repo.dir, ".muster"));
  if (files.include !== undefined)
    fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-include"), files.include);
  if (files.setup !== undefined)
    fs.writeFileSync(path.join(repo.dir, ".muster", "worktree-setup"), files.setup, {
      mode: files.setupMode ?? 0o755,
    });
  for (const [rel, text] of Object.entries(files.extra ?? {})) {
    fs.mkdirSync(path.dirname(path.join(repo.dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo.dir, rel), text);
  }
  return repo;
}

const worktrees = () => {
  const d = path.join(sb.home, "worktrees");
  return fs.existsSync(d) ? fs.readdirSync(d) : [];
};
const artifactDirs = () =>
  fs.existsSync(path.join(sb.home, "primaries"))
    ? fs.readdirSync(path.join(sb.home, "primaries")).flatMap((p) => {
        const a = path.join(sb.home, "primaries", p, "artifacts");
        return fs.existsSync(a) ? fs.readdirSync(a) : [];
      })
    : [];

/** An isolated command-runner child in `repo` running `sh -c script`, waited for; its CLI run. */
const isolated = (repo: string, script: string, extra: string[] = []) =>
  sb.run([
    ...[
      "spawn",
      "--agent",
      "command",
      "--isolation",
      "worktree",
      "--cwd",
      repo,
      "--wait",
      "--json",
      ...extra,
    ],
    ...["task", "--", "sh", "-c", script],
  ]);

/** What a refused spawn must leave: nothing new in the state root, no branch, one worktree in git's list. */
async function nothingLeft(
  repo: ReturnType<typeof checkout>,
  before: { wts: number; dirs: number; kids: number },
) {
  expect(worktrees()).toHaveLength(before.wts);
  expect(artifactDirs()).toHaveLength(before.dirs);
  expect(((await sb.json(["ls"])).data.children ?? []).length).toBe(before.kids);
  expect(repo.git("branch", "--list", "muster/*").trim()).toBe("");
  expect(repo.git("worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
}

const counts = async () => ({
  wts: worktrees().length,
  dirs: artifactDirs().length,
  kids: ((await sb.json(["ls"])).data.children ?? []).length,
});

describe("worktree set-up (.muster/worktree-include, .muster/worktree-setup)", () => {
  it("copies the listed untracked files in (mode kept, missing ones warned), runs the set-up there first; the child sees both", async () => {
    const repo = checkout({
      include: "# local files git does not carry\n.env\n\nconfig/local/\nnot-there.txt\n",
      setup: [
        "#!/bin/sh",
        "set -e",
        // The set-up runs in the new worktree, with the child's id and the worktree's path, and sees .env.
        'echo "built for $MUSTER_CHILD_ID in $MUSTER_WORKTREE from $(cat .env)" > generated.txt',
        "pwd > setup-cwd.txt",
        "echo installing; echo done >&2",
      ].join("\n"),
      extra: { ".env": "SECRET=1\n", "config/local/a.json": "{}\n", "config/local/deep/b.txt": "b\n" },
    });
    fs.chmodSync(path.join(repo.dir, ".env"), 0o600);
    const r = await isolated(repo.dir, "cat generated.txt .env config/local/deep/b.txt");
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const res = out.results[0];
    const id = res.id as string;
    const wt = res.isolation.worktree as string;
    expect(res.status).toBe("completed");
    expect(out.spawned.warnings).toContain(
      ".muster/worktree-include line 5: not-there.txt is not there; skipped",
    );
    // The child's first turn read what the set-up made and what was copied in.
    const answer = (await sb.run(["result", id])).stdout;
    expect(answer).toContain(`built for ${id} in ${wt} from SECRET=1`);
    expect(answer).toContain("b\n");
    expect(fs.readFileSync(path.join(wt, "setup-cwd.txt"), "utf8").trim()).toBe(fs.realpathSync(wt));
    expect(fs.statSync(path.join(wt, ".env")).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(wt, "config/local/a.json"), "utf8")).toBe("{}\n");
    // The set-up's record is the log's first, before the host's.
    const events = readEvents(res.artifactDir ?? out.spawned.artifactDir);
    expect(events[0]).toMatchObject({
      type: "worktree_setup",
      seq: 1,
      included: { files: 3, bytes: 9 + 3 + 2 },
      script: ".muster/worktree-setup",
      exitCode: 0,
    });
    expect(events[0]!.outputTail).toMatch(/installing\ndone\n|done\ninstalling\n/);
    expect(events[1]).toMatchObject({ type: "child_started", seq: 2 });
    // logs shows it with its output.
    const logs = await sb.run(["logs", id]);
    expect(logs.stdout).toMatch(
      /worktree set up · 3 files \(14 B\) copied in · \.muster\/worktree-setup exited 0 in /,
    );
    expect(logs.stdout).toMatch(/│ installing/);
    // The parent's checkout is untouched.
    expect(fs.existsSync(path.join(repo.dir, "generated.txt"))).toBe(false);
  });

  it("an include line leading out of the checkout is refused naming the file and line; nothing is created", async () => {
    const before = await counts();
    for (const [line, said] of [
      ["../outside.txt", /worktree-include line 2: \.\.\/outside\.txt leads out of the checkout$/],
      [
        "/etc/hostname",
        /worktree-include line 2: \/etc\/hostname is absolute; give a path inside the checkout$/,
      ],
      [
        "link-out",
        /worktree-include line 2: link-out is a symlink leading out of the checkout \(to \/\S+\)$/,
      ],
    ] as const) {
      const repo = checkout({ include: `.env\n${line}\n`, extra: { ".env": "x\n" } });
      fs.symlinkSync(path.dirname(sb.home), path.join(repo.dir, "link-out"));
      const r = await isolated(repo.dir, "true");
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(said);
      await nothingLeft(repo, before);
    }
  });

  it("a set-up that fails refuses the spawn with the end of its output, and leaves no worktree, branch, dir or child", async () => {
    const before = await counts();
    const repo = checkout({
      include: ".env\n",
      setup: "#!/bin/sh\necho step one\necho 'npm ERR! missing lockfile' >&2\ntouch made-by-setup\nexit 3\n",
      extra: { ".env": "x\n" },
    });
    const r = await isolated(repo.dir, "true");
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(
      /^muster: \S+\/\.muster\/worktree-setup failed \(exit 3\): nothing was created; the end of its output:$/,
    );
    expect(lines.slice(1)).toEqual(["  │ step one", "  │ npm ERR! missing lockfile"]);
    await nothingLeft(repo, before);
    // --json carries the output as the error's detail.
    const j = await isolated(repo.dir, "true");
    expect(j.exitCode).toBe(2);
    expect(JSON.parse(j.stdout).error).toMatchObject({
      code: "invalid_config",
      detail: "step one\nnpm ERR! missing lockfile",
    });
    await nothingLeft(repo, before);
  });

  it("a set-up past its time is stopped (with what it started) and refuses the spawn", async () => {
    const before = await counts();
    const marker = path.join(path.dirname(sb.home), `slow-${Date.now()}`);
    const repo = checkout({
      // A child process of the script that would outlive it: stopped with it.
      setup: `#!/bin/sh\necho started\nsleep 30 &\necho $! > "${marker}"\nsleep 30\n`,
    });
    // MUSTER_WORKTREE_SETUP_SECONDS bounds it.
    const slow = await sb.run(
      ["spawn", "--agent", "command", "--isolation", "worktree", "--cwd", repo.dir, "t", "--", "true"],
      { env: { MUSTER_WORKTREE_SETUP_SECONDS: "1.5" } },
    );
    expect(slow.exitCode).toBe(2);
    expect(slow.stderr).toMatch(/worktree-setup did not finish within 1.5s \(stopped\): nothing was created/);
    expect(slow.stderr).toMatch(/│ started/);
    expect(slow.stderr).toMatch(/muster: running \.muster\/worktree-setup in \S+…/);
    const pid = Number(fs.readFileSync(marker, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow();
    await nothingLeft(repo, before);
  });

  it("a set-up that is not executable is refused in one line before anything is made", async () => {
    const before = await counts();
    const repo = checkout({ setup: "#!/bin/sh\necho hi\n", setupMode: 0o644 });
    const r = await isolated(repo.dir, "true");
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(
      /\.muster\/worktree-setup is not executable \(chmod \+x it, or remove it\)$/,
    );
    await nothingLeft(repo, before);
  });

  it("without .muster files, and without --isolation worktree, nothing of this happens", async () => {
    const repo = checkout({ setup: "#!/bin/sh\ntouch ran\n", include: ".env\n", extra: { ".env": "x\n" } });
    const plain = makeRepo(path.join(sb.cwd, "plain"));
    const r = await isolated(plain.dir, "ls -A");
    expect(r.exitCode, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout).results[0];
    expect(readEvents(res.artifactDir ?? JSON.parse(r.stdout).spawned.artifactDir)[0]!.type).toBe(
      "child_started",
    );
    const here = await sb.run([
      "spawn",
      "--agent",
      "command",
      "--cwd",
      repo.dir,
      "--wait",
      "t",
      "--",
      "true",
    ]);
    expect(here.exitCode, here.stderr).toBe(0);
    expect(fs.existsSync(path.join(repo.dir, "ran"))).toBe(false);
  });
});
