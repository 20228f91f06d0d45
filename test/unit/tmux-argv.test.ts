import { describe, expect, it } from "vitest";
import * as A from "../../src/mux/tmux/argv.js";

describe("tmux argv builders", () => {
  it("serverArgs", () => {
    expect(A.serverArgs(null)).toEqual([]);
    expect(A.serverArgs({ flag: "-L", value: "x" })).toEqual(["-L", "x"]);
    expect(A.serverArgs({ flag: "-S", value: "/tmp/s" })).toEqual(["-S", "/tmp/s"]);
  });

  it("escapes a trailing ; (tmux's command separator) and # in format-expanded values", () => {
    expect(A.escapeWord("a;")).toBe("a\\;");
    expect(A.escapeWord("a\\;")).toBe("a\\\\;");
    expect(A.escapeWord(";a")).toBe(";a");
    expect(A.escapeFormat("/p/#{x}/q;")).toBe("/p/##{x}/q\\;");
  });

  it("commandWords wraps a single word in env -- so no shell sees it", () => {
    expect(A.commandWords(["$(rm -rf ~)"])).toEqual(["env", "--", "$(rm -rf ~)"]);
    expect(A.commandWords(["node", "a b", "x;"])).toEqual(["node", "a b", "x\\;"]);
  });

  it("chain and commandBytes", () => {
    expect(A.chain(["a"], ["b", "c"], ["d"])).toEqual(["a", ";", "b", "c", ";", "d"]);
    expect(A.commandBytes(["ab", "é"])).toBe(3 + 3);
  });

  it("new-session and has-session", () => {
    expect(A.newSessionArgs({ name: "muster" })).toEqual([
      "new-session",
      "-d",
      "-s",
      "muster",
      "-x",
      "200",
      "-y",
      "50",
    ]);
    expect(A.newSessionArgs({ name: "m", windowName: "w#", argv: ["cat", "-"] })).toEqual([
      ...["new-session", "-d", "-s", "m", "-n", "w##", "-x", "200", "-y", "50"],
      ...["--", "cat", "-"],
    ]);
    expect(A.hasSessionArgs("muster")).toEqual(["has-session", "-t", "=muster"]);
  });

  it("new-window with everything", () => {
    const args = A.newWindowArgs({
      target: "=muster:",
      name: "n",
      cwd: "/w",
      env: { K: "V", L: "x;" },
      argv: ["node", "-e", "1"],
      format: "#{pane_id}",
    });
    expect(args).toEqual([
      ...["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "=muster:", "-n", "n", "-c", "/w"],
      ...["-e", "K=V", "-e", "L=x\\;", "--", "node", "-e", "1"],
    ]);
    expect(A.newWindowArgs({ target: "s:", detached: false })).toEqual(["new-window", "-t", "s:"]);
  });

  it("split-window", () => {
    expect(A.splitWindowArgs({ target: "%1", horizontal: true, format: "F", argv: ["a", "b"] })).toEqual([
      ...["split-window", "-d", "-h", "-P", "-F", "F", "-t", "%1", "--", "a", "b"],
    ]);
    expect(A.splitWindowArgs({ target: "%1" })).toEqual(["split-window", "-d", "-t", "%1"]);
  });

  it("respawn-pane, set-option, remain-on-exit and the start chain", () => {
    const run = { cwd: "/w", env: { A: "1" }, argv: ["sh", "-c", "exit 3"] };
    expect(A.respawnPaneArgs({ ...run, target: "%2" })).toEqual([
      ...["respawn-pane", "-k", "-t", "%2", "-c", "/w", "-e", "A=1", "--", "sh", "-c", "exit 3"],
    ]);
    expect(A.setOptionArgs({ scope: "window", target: "%2", name: "o", value: "v" })).toEqual([
      ...["set-option", "-w", "-t", "%2", "o", "v"],
    ]);
    expect(A.setOptionArgs({ scope: "session", target: "s", name: "o", value: "v" })).toEqual([
      ...["set-option", "-t", "s", "o", "v"],
    ]);
    expect(A.remainOnExitArgs("%2")).toEqual(["set-option", "-p", "-t", "%2", "remain-on-exit", "on"]);
    expect(A.startPaneArgs("%2", run)).toEqual([
      ...A.remainOnExitArgs("%2"),
      ";",
      ...A.respawnPaneArgs({ ...run, target: "%2" }),
    ]);
  });

  it("a marked new window kept on exit, titled and named in the same command", () => {
    expect(A.keepMarkedWindowArgs("=muster:=muster-new-1", "child #1;", "t #2")).toEqual([
      ["set-option", "-p", "-t", "=muster:=muster-new-1", "remain-on-exit", "on"],
      ["select-pane", "-t", "=muster:=muster-new-1", "-T", "t ##2"],
      ["rename-window", "-t", "=muster:=muster-new-1", "child ##1\\;"],
    ]);
    expect(A.keepMarkedWindowArgs("$3:=m", "c")).toEqual([
      ["set-option", "-p", "-t", "$3:=m", "remain-on-exit", "on"],
      ["rename-window", "-t", "$3:=m", "c"],
    ]);
  });

  it("startCommandProblem", () => {
    const ok = { cwd: "/w", env: {}, argv: ["a"] };
    expect(A.startCommandProblem(ok)).toBeNull();
    expect(A.startCommandProblem({ ...ok, argv: [] })).toMatch(/empty argv/);
    expect(A.startCommandProblem({ ...ok, env: { "A-B": "1" } })).toMatch(/environment name/);
    expect(A.startCommandProblem({ ...ok, argv: ["a", "x".repeat(17_000)] })).toMatch(/16 KB/);
    // A new window's name and title go in the same tmux command: they count too.
    const room = (n: number) => ({ ...ok, argv: ["a", "x".repeat(n)] });
    let n = 15_000;
    while (A.startCommandProblem(room(n + 1)) === null) n++;
    expect(A.startCommandProblem(room(n))).toBeNull();
    expect(A.startCommandProblem(room(n), { name: "w" })).toMatch(/16 KB/);
    expect(A.startCommandProblem(room(n - 600), { name: "w", title: "t".repeat(200) })).toBeNull();
  });

  it("display, list, buffers, if-shell", () => {
    expect(A.displayMessageArgs("%1", "#{pane_dead}")).toEqual([
      "display-message",
      "-p",
      "-t",
      "%1",
      "#{pane_dead}",
    ]);
    expect(A.listPanesArgs("F")).toEqual(["list-panes", "-a", "-F", "F"]);
    expect(A.loadBufferArgs("b")).toEqual(["load-buffer", "-b", "b", "-"]);
    expect(A.pasteBufferArgs("b", "%1")).toEqual(["paste-buffer", "-p", "-r", "-d", "-b", "b", "-t", "%1"]);
    expect(A.deleteBufferArgs("b")).toEqual(["delete-buffer", "-b", "b"]);
    expect(A.ifFormatArgs("%1", "#{x}", "a", "b")).toEqual(["if-shell", "-F", "-t", "%1", "#{x}", "a", "b"]);
  });

  it("send-keys, capture-pane", () => {
    expect(A.sendKeysArgs("%1", ["Enter"])).toEqual(["send-keys", "-t", "%1", "--", "Enter"]);
    expect(A.sendKeysArgs("%1", ["-n", "x;"], { literal: true })).toEqual([
      ...["send-keys", "-l", "-t", "%1", "--", "-n", "x\\;"],
    ]);
    expect(A.capturePaneArgs("%1", 200)).toEqual(["capture-pane", "-p", "-J", "-t", "%1", "-S", "-200"]);
    expect(A.capturePaneArgs("%1", 5, { escapes: true })).toEqual([
      ...["capture-pane", "-p", "-J", "-e", "-t", "%1", "-S", "-5"],
    ]);
  });

  it("kill, select, switch, attach", () => {
    expect(A.killPaneArgs("%1")).toEqual(["kill-pane", "-t", "%1"]);
    expect(A.killServerArgs()).toEqual(["kill-server"]);
    expect(A.selectWindowArgs("%1")).toEqual(["select-window", "-t", "%1"]);
    expect(A.selectPaneArgs("%1")).toEqual(["select-pane", "-t", "%1"]);
    expect(A.switchClientArgs("%1")).toEqual(["switch-client", "-t", "%1"]);
    expect(A.attachSessionArgs("muster")).toEqual(["attach-session", "-t", "muster"]);
    expect(A.focusPaneArgs("%1", false)).toEqual([
      "select-window",
      "-t",
      "%1",
      ";",
      "select-pane",
      "-t",
      "%1",
    ]);
    expect(A.focusPaneArgs("%1", true)).toEqual([
      ...["switch-client", "-t", "%1", ";", "select-window", "-t", "%1", ";", "select-pane", "-t", "%1"],
    ]);
    expect(A.runShellArgs("true")).toEqual(["run-shell", "true"]);
  });

  it("a viewer's session: grouped with the pane's, gone when unattached, no status line, read-only unless input", () => {
    const tail = [
      ["set-option", "-t", "muster-view-1a", "destroy-unattached", "on"],
      ["set-option", "-t", "muster-view-1a", "status", "off"],
    ];
    expect(A.viewSessionArgs("muster", "muster-view-1a", false)).toEqual([
      ["new-session", "-t", "=muster", "-s", "muster-view-1a", "-f", "read-only,ignore-size"],
      ...tail,
    ]);
    expect(A.viewSessionArgs("muster", "muster-view-1a", true)).toEqual([
      ["new-session", "-t", "=muster", "-s", "muster-view-1a"],
      ...tail,
    ]);
    // A user's session name with tmux's special characters stays one literal word.
    expect(A.viewSessionArgs("my;session", "v", false)[0]![2]).toBe(A.escapeWord("=my;session"));
  });
});

describe("display-popup", () => {
  it("closes with its command (-E), targets the caller's pane, escapes formats and keeps argv words literal", () => {
    expect(A.displayPopupArgs({ target: "%3", argv: ["muster", "ls"] })).toEqual([
      "display-popup",
      "-E",
      "-t",
      "%3",
      "--",
      "muster",
      "ls",
    ]);
    expect(
      A.displayPopupArgs({
        target: "%3",
        argv: ["$(rm -rf ~)"],
        cwd: "/p/#x",
        title: "a;",
        width: "80%",
        height: "20",
      }),
    ).toEqual([
      "display-popup",
      "-E",
      "-t",
      "%3",
      "-d",
      "/p/##x",
      "-T",
      "a\\;",
      "-w",
      "80%",
      "-h",
      "20",
      "--",
      "env",
      "--",
      "$(rm -rf ~)",
    ]);
  });
});

describe("pane title", () => {
  it("select-pane -T with the title's format characters escaped", () => {
    expect(A.paneTitleArgs("%4", "reviewer (mock 1a2b3c4d)")).toEqual([
      "select-pane",
      "-t",
      "%4",
      "-T",
      "reviewer (mock 1a2b3c4d)",
    ]);
    expect(A.paneTitleArgs("%4", "a#{pane_id}")[4]).toBe("a##{pane_id}");
  });
});
