import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import { describe, expect, it } from "vitest";
import { lowestPriority } from "../../src/util/process-group.js";
import { autogroupNice, useSleepers } from "../helpers/sleepers.js";

const sleeper = useSleepers();

// Linux with sched_autogroup (this machine's kernel and CI's): the property is only defined there.
describe.runIf(fs.existsSync("/proc/self/autogroup"))("lowestPriority under autogroups", () => {
  it("lowers a process and, when it leads a session of its own, that session's scheduling group", () => {
    const pid = sleeper({ detached: true });
    expect(autogroupNice(pid)).toBe(0);
    lowestPriority(pid);
    expect(os.getPriority(pid)).toBe(os.constants.priority.PRIORITY_LOW);
    expect(autogroupNice(pid)).toBe(19);
    expect(autogroupNice("self")).toBe(0);
  });

  it("leaves the group alone when it is ours too: lowering it would lower this process", () => {
    const pid = sleeper();
    lowestPriority(pid);
    expect(os.getPriority(pid)).toBe(os.constants.priority.PRIORITY_LOW);
    expect(autogroupNice("self")).toBe(0);
    expect(autogroupNice(pid)).toBe(0);
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
