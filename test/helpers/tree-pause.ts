/** What the agent tests check of a paused tree, once a child's provider refused its turn on a quota. */
import { expect } from "vitest";
import { readEvents, type Sandbox, until } from "./cli.js";

/**
 * A sibling spawned while the tree is paused is held (shown paused, no turn started) until `resume-tree`,
 * then runs to completion. Returns its id.
 */
export async function siblingHeldUntilResume(sb: Sandbox, env: NodeJS.ProcessEnv): Promise<string> {
  const sib = await sb.json(["spawn", "--agent", "mock", "after the quota"], { env });
  expect(sib.data.paused, sib.stderr).toMatchObject({ kind: "quota" });
  await until(() => readEvents(sib.data.artifactDir).some((e) => e.type === "turn_held"), 30_000);
  expect(readEvents(sib.data.artifactDir).some((e) => e.type === "turn_started")).toBe(false);
  const resumed = await sb.json(["resume-tree"], { env });
  expect(resumed.data.resumed).toMatchObject({ kind: "quota" });
  const done = await sb.json(["wait", sib.data.id, "--timeout", "60s"], { env });
  expect(done.data.results[0].status).toBe("completed");
  return sib.data.id as string;
}
