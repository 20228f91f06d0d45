import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import { describe, expect, it } from "vitest";
import { lowestPriority } from "../../src/util/process-group.js";
import { autogroupNice, autogroupOf, useSleepers } from "../helpers/sleepers.js";

const sleeper = useSleepers();

// Linux with sched_autogroup (this machine's kernel and CI's): the property is only defined there.
describe.runIf(fs.existsSync("/proc/self/autogroup"))("lowestPriority under autogroups", () => {
  it("lowers a process and, when it leads a session of its own, that session's scheduling group", () => {
    const ours = autogroupOf("self");
    const pid = sleeper({ detached: true });
    expect(autogroupNice(pid)).toBe(0);
    lowestPriority(pid);
    expect(os.getPriority(pid)).toBe(os.constants.priority.PRIORITY_LOW);
    expect(autogroupNice(pid)).toBe(19);
    expect(autogroupOf("self")).toBe(ours);
  });

  it("leaves the group alone when it is ours too: lowering it would lower this process", () => {
    // Ours may be a session's group ("nice 0") or, where this runs in init's session, the root group ("").
    const ours = autogroupOf("self");
    const pid = sleeper();
    lowestPriority(pid);
    expect(os.getPriority(pid)).toBe(os.constants.priority.PRIORITY_LOW);
    expect(autogroupOf("self")).toBe(ours);
    expect(autogroupOf(pid)).toBe(ours);
  });

  it("a process already gone is no error", () => {
    const child = spawn("true", { detached: true, stdio: "ignore" });
    return new Promise<void>((done) =>
      child.on("exit", () => {
        expect(() => lowestPriority(child.pid!)).not.toThrow();
        done();
      }),
    );
  });
});
