import { describe, expect, it } from "vitest";
import "../../src/mux/builtin.js";
import { backendNames, defaultBackendName } from "../../src/mux/registry.js";
import * as A from "../../src/mux/zellij/argv.js";
import { zellijSession } from "../../src/mux/zellij/backend.js";
import { zellijClientEnv } from "../../src/mux/zellij/exec.js";
import * as P from "../../src/mux/zellij/parse.js";

describe("zellij argv builders (Zellij 0.44's documented CLI)", () => {
  it("every action names its session: --session <s> action …", () => {
    expect(A.actionArgs("muster", ["list-panes", "--json"])).toEqual([
      "--session",
      "muster",
      "action",
      "list-panes",
      "--json",
    ]);
    expect(A.createSessionArgs("muster")).toEqual(["attach", "--create-background", "muster"]);
    expect(A.versionArgs()).toEqual(["--version"]);
    expect(A.attachArgs("s1")).toEqual(["attach", "s1"]);
  });

  it("new-pane: placement, name, cwd, then the command after --", () => {
    const command = ["node", "host.js", "/a dir"];
    expect(A.newPaneArgs({ name: "c1", cwd: "/w", command })).toEqual([
      ...["new-pane", "--name", "c1", "--cwd", "/w", "--"],
      ...command,
    ]);
    expect(A.newPaneArgs({ name: "c1", cwd: "/w", command, direction: "right" })).toEqual([
      ...["new-pane", "--direction", "right", "--name", "c1", "--cwd", "/w", "--"],
      ...command,
    ]);
    expect(
      A.newPaneArgs({
        name: "pop",
        command: ["top"],
        floating: { width: "90%", height: "80%" },
        closeOnExit: true,
      }),
    ).toEqual([
      ...["new-pane", "--floating", "--width", "90%", "--height", "80%", "--close-on-exit"],
      ...["--name", "pop", "--", "top"],
    ]);
  });

  it("new-tab with the command after --; focus given back by current-tab-info and go-to-tab (index from 1)", () => {
    expect(A.newTabArgs({ name: "c1", cwd: "/w", command: ["node", "-x"] })).toEqual([
      ...["new-tab", "--name", "c1", "--cwd", "/w", "--", "node", "-x"],
    ]);
    expect(A.currentTabInfoArgs()).toEqual(["current-tab-info", "--json"]);
    expect(A.goToTabArgs(0)).toEqual(["go-to-tab", "1"]);
    expect(P.parseTabPosition('{"position":2,"name":"x"}')).toBe(2);
    expect(P.parseTabPosition("No active tab found for current client")).toBeNull();
  });

  it("the pane command carries extra environment through env --, never a shell", () => {
    expect(A.paneCommand(["node", "x"])).toEqual(["node", "x"]);
    expect(A.paneCommand(["node", "$(x)"], { A: "1", B: "a b" })).toEqual([
      ...["env", "--", "A=1", "B=a b"],
      ...["node", "$(x)"],
    ]);
    expect(A.paneCommandProblem([])).toMatch(/empty/);
    expect(A.paneCommandProblem(["node"], { "A B": "1" })).toMatch(/variable name/);
    expect(A.paneCommandProblem(["X=1"], { A: "1" })).toMatch(/'='/);
    expect(A.paneCommandProblem(["X=1"])).toBeNull();
  });

  it("pane operations by --pane-id; text after -- so a leading - is text", () => {
    expect(A.listPanesArgs()).toEqual(["list-panes", "--json"]);
    expect(A.writeCharsArgs(3, "-n hi\n")).toEqual(["write-chars", "--pane-id", "3", "--", "-n hi\n"]);
    expect(A.enterArgs(3)).toEqual(["write", "--pane-id", "3", "13"]);
    expect(A.dumpScreenArgs(3)).toEqual(["dump-screen", "--full", "--pane-id", "3"]);
    expect(A.closePaneArgs(3)).toEqual(["close-pane", "--pane-id", "3"]);
    expect(A.focusPaneArgs(3)).toEqual(["focus-pane-id", "3"]);
  });
});

describe("zellij parsers", () => {
  it("list-panes --json: terminal panes only (plugin ids are another namespace), exit state", () => {
    const json = JSON.stringify([
      { id: 0, is_plugin: true, title: "tab-bar" },
      { id: 0, is_plugin: false, title: "shell", exited: false },
      { id: "2", is_plugin: false, title: "c1", exited: true, exit_status: 3 },
    ]);
    expect(P.parsePaneList(json)).toEqual([
      { id: 0, exited: false, exitStatus: null, title: "shell" },
      { id: 2, exited: true, exitStatus: 3, title: "c1" },
    ]);
    expect(P.parsePaneList("There is no active session!")).toBeNull();
    expect(P.parsePaneList("{}")).toBeNull();
    expect(P.parsePaneList('[{"id":-1}]')).toBeNull();
  });

  it("the new pane: the printed id when it is new, else the one new pane, else the one with our name", () => {
    const pane = (id: number, title = "") => ({ id, exited: false, exitStatus: null, title });
    expect(P.parseNewPaneId("terminal_5\n")).toBe(5);
    expect(P.parseNewPaneId("7")).toBe(7);
    expect(P.parseNewPaneId("plugin_1")).toBeNull();
    const before = [pane(0)];
    expect(P.newPaneOf(before, [pane(0), pane(4, "x")], "c1", 4)).toBe(4);
    expect(P.newPaneOf(before, [pane(0), pane(4)], "c1", null)).toBe(4);
    // Printed id not among the new panes (a counter of another kind): fall back to the diff.
    expect(P.newPaneOf(before, [pane(0), pane(4)], "c1", 0)).toBe(4);
    expect(P.newPaneOf(before, [pane(0), pane(4, "c2"), pane(5, "c1")], "c1", null)).toBe(5);
    expect(P.newPaneOf(before, [pane(0), pane(4), pane(5)], "c1", null)).toBeNull();
    expect(P.newPaneOf(before, before, "c1", null)).toBeNull();
  });

  it("a session that does not exist is told apart from a failing zellij", () => {
    expect(P.isSessionGone("Session 'muster' not found")).toBe(true);
    expect(P.isSessionGone("There is no active session!")).toBe(true);
    expect(P.isSessionGone("No active zellij sessions found.")).toBe(true);
    expect(P.isSessionGone("error: Found argument '--json' which wasn't expected")).toBe(false);
    expect(P.isSessionGone("")).toBe(false);
  });

  it("version", () => {
    expect(P.parseVersion("zellij 0.44.3\n")).toBe("0.44.3");
    expect(P.parseVersion("tmux 3.3a")).toBeNull();
  });
});

describe("zellij selection and environment", () => {
  it("registered as zellij; the default inside a Zellij session, MUSTER_BACKEND wins", () => {
    expect(backendNames()).toContain("zellij");
    expect(defaultBackendName({ ZELLIJ: "0" })).toBe("zellij");
    expect(defaultBackendName({ ZELLIJ: "0", MUSTER_BACKEND: "tmux" })).toBe("tmux");
    expect(defaultBackendName({})).toBe("tmux");
  });

  it("the caller's session inside Zellij, else MUSTER_ZELLIJ_SESSION or muster", () => {
    expect(zellijSession({ ZELLIJ: "0", ZELLIJ_SESSION_NAME: "work" })).toEqual({
      name: "work",
      inside: true,
    });
    expect(zellijSession({ MUSTER_ZELLIJ_SESSION: "mine" })).toEqual({ name: "mine", inside: false });
    expect(zellijSession({})).toEqual({ name: "muster", inside: false });
  });

  it("the client gets only what a client needs, never the caller's secrets", () => {
    const env = zellijClientEnv({
      PATH: "/b",
      HOME: "/h",
      ZELLIJ: "0",
      LC_ALL: "C",
      API_KEY: "s",
      XDG_RUNTIME_DIR: "/r",
    });
    expect(env).toEqual({ PATH: "/b", HOME: "/h", ZELLIJ: "0", LC_ALL: "C", XDG_RUNTIME_DIR: "/r" });
  });
});
