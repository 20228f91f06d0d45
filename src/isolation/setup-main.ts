/**
 * The far side of a worktree set-up (isolation/setup.ts), run by muster's node on the machine of a worktree
 * there: stdin is one JSON line (SetupRequest) and then the script's bytes. The script is written into the
 * worktree's `.git` folder (never among the child's files), run there bounded as on this machine, and removed;
 * the outcome (BoundedRun) is one JSON line on stdout.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { runBounded } from "../util/bounded-run.js";
import type { SetupRequest } from "./setup.js";

async function main(): Promise<void> {
  const input = fs.readFileSync(0);
  const nl = input.indexOf(10);
  if (nl < 0) throw new Error("no request line on stdin");
  const req = JSON.parse(input.subarray(0, nl).toString("utf8")) as SetupRequest;
  const script = path.join(req.cwd, ".git", `muster-worktree-setup-${process.pid}`);
  fs.writeFileSync(script, input.subarray(nl + 1), { mode: 0o700 });
  try {
    const run = await runBounded([script], {
      cwd: req.cwd,
      env: req.inherit ? { ...process.env, ...req.env } : req.env,
      timeoutMs: req.timeoutMs,
      keepBytes: req.keepBytes,
    });
    process.stdout.write(`${JSON.stringify(run)}\n`);
  } finally {
    fs.rmSync(script, { force: true });
  }
}

main().catch((e: Error) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
