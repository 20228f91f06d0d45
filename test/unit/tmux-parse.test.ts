import { describe, expect, it } from "vitest";
import * as P from "../../src/mux/tmux/parse.js";

describe("tmux parsers", () => {
  it("parseVersion", () => {
    expect(P.parseVersion("tmux 3.3a\n")).toBe("3.3a");
    expect(P.parseVersion("tmux next-3.6")).toBe("next-3.6");
    expect(P.parseVersion("tmux: command not found")).toBeNull();
    expect(P.parseVersion("")).toBeNull();
  });

  it("parseTmuxEnv", () => {
    expect(P.parseTmuxEnv("/tmp/tmux-1000/default,4242,0")).toEqual({
      socketPath: "/tmp/tmux-1000/default",
      serverPid: 4242,
      sessionIndex: 0,
    });
    expect(P.parseTmuxEnv("/tmp/a,b/sock,12,3")?.socketPath).toBe("/tmp/a,b/sock");
    expect(P.parseTmuxEnv(undefined)).toBeNull();
    expect(P.parseTmuxEnv("")).toBeNull();
    expect(P.parseTmuxEnv("/tmp/x")).toBeNull();
  });

  it("PANE_FORMAT puts session_name last", () => {
    expect(P.PANE_FORMAT.split("\t")).toEqual([
      "#{pane_id}",
      "#{window_id}",
      "#{pane_pid}",
      "#{pane_dead}",
      "#{pane_dead_status}",
      "#{pane_dead_signal}",
      "#{session_name}",
    ]);
  });

  it("parsePaneRow: alive, exited, signalled, junk", () => {
    expect(P.parsePaneRow("%3\t@2\t1234\t0\t\t\tmuster")).toEqual({
      paneId: "%3",
      windowId: "@2",
      pid: 1234,
      dead: false,
      deadStatus: null,
      deadSignal: null,
      session: "muster",
    });
    expect(P.parsePaneRow("%4\t@3\t99\t1\t3\t\ts")).toMatchObject({
      dead: true,
      deadStatus: 3,
      deadSignal: null,
    });
    expect(P.parsePaneRow("%5\t@3\t99\t1\t\t9\ts")).toMatchObject({
      dead: true,
      deadStatus: null,
      deadSignal: 9,
    });
    expect(P.parsePaneRow("%6\t@3\t99\t0\t\t\ta\tb")?.session).toBe("a\tb");
    expect(P.parsePaneRow("")).toBeNull();
    expect(P.parsePaneRow("x\t@3\t99\t0\t\t\ts")).toBeNull();
    expect(P.parsePaneRow("%1\t@1")).toBeNull();
  });

  it("parsePaneList", () => {
    const rows = P.parsePaneList("%1\t@1\t10\t0\t\t\tm\n%2\t@1\t11\t1\t0\t\tm\n\n");
    expect([...rows.keys()]).toEqual(["%1", "%2"]);
    expect(rows.get("%2")?.deadStatus).toBe(0);
  });

  it("classifyTmuxError: dead only when the pane or server is provably gone", () => {
    expect(P.classifyTmuxError("no server running on /tmp/tmux-0/x\n")).toBe("dead");
    expect(P.classifyTmuxError("error connecting to /tmp/tmux-0/x (No such file or directory)")).toBe("dead");
    expect(P.classifyTmuxError("error connecting to /tmp/tmux-0/x (Connection refused)")).toBe("dead");
    expect(P.classifyTmuxError("can't find pane: %99")).toBe("dead");
    expect(P.classifyTmuxError("error connecting to /tmp/tmux-0/x (Permission denied)")).toBe("unknown");
    expect(P.classifyTmuxError("server exited unexpectedly")).toBe("unknown");
    expect(P.classifyTmuxError("")).toBe("unknown");
  });

  it("isMissingSession", () => {
    expect(P.isMissingSession("can't find session: muster")).toBe(true);
    expect(P.isMissingSession("no server running on /tmp/tmux-0/x")).toBe(true);
    expect(P.isMissingSession("error connecting to /tmp/tmux-0/x (No such file or directory)")).toBe(true);
    // What tmux 3.3a says to `new-window -t =muster:` on a server that has no session yet.
    expect(P.isMissingSession("no current target")).toBe(true);
    expect(P.isMissingSession("command too long")).toBe(false);
  });

  it("clampCaptureLines", () => {
    expect(P.clampCaptureLines(undefined)).toBe(200);
    expect(P.clampCaptureLines(Number.NaN)).toBe(200);
    expect(P.clampCaptureLines(0)).toBe(1);
    expect(P.clampCaptureLines(7.9)).toBe(7);
    expect(P.clampCaptureLines(1e9)).toBe(10_000);
  });

  it("captureTail drops blank screen rows, keeps the last lines, caps bytes", () => {
    expect(P.captureTail("a\nb\nc\n\n   \n", 2)).toBe("b\nc");
    expect(P.captureTail("\n\n", 5)).toBe("");
    expect(P.captureTail("x\n0123456789", 5, 4)).toBe("6789");
    expect(P.captureTail("éé", 1, 3)).toBe("é");
  });
});
