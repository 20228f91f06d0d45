import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Registry } from "../../src/core/registry.js";
import { isTmuxRef, normalizePaneRef, paneLabel } from "../../src/mux/backend.js";
import "../../src/mux/builtin.js";
import { BackendSet, backendNames, defaultBackendName, registerBackend } from "../../src/mux/registry.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-backends-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const tmuxPane = { server: null, session: "muster", paneId: "%4", windowId: "@2" };

describe("pane refs tagged by backend", () => {
  it("a ref without a backend (written before backends had names) is a tmux pane; others keep theirs", () => {
    const old = normalizePaneRef(tmuxPane);
    expect(old).toEqual({ backend: "tmux", ...tmuxPane });
    expect(isTmuxRef(old!)).toBe(true);
    expect(paneLabel(old!)).toBe("%4");
    const other = normalizePaneRef({ backend: "process", id: "p1", data: { pid: 1 } });
    expect(isTmuxRef(other!)).toBe(false);
    expect(paneLabel(other!)).toBe("p1");
    expect(normalizePaneRef(null)).toBeNull();
    expect(normalizePaneRef({ what: 1 })).toBeNull();
  });

  it("the registry reads an old entry's pane and pane history as tmux panes", () => {
    const file = path.join(dir, "registry.json");
    const entry = { id: "c1", agent: "mock", runner: "mock", parent: null, createdAt: "", cwd: "/" };
    fs.writeFileSync(
      file,
      JSON.stringify({
        v: 1,
        primary: "p",
        children: { c1: { ...entry, pane: tmuxPane, panes: [tmuxPane] } },
      }),
    );
    const c = new Registry(file, "p").read().children.c1!;
    expect(c.pane).toMatchObject({ backend: "tmux", paneId: "%4" });
    expect(c.panes).toEqual([{ backend: "tmux", ...tmuxPane }]);
  });
});

describe("backends by name", () => {
  it("tmux is registered by the entry module; the default is MUSTER_BACKEND, else tmux", () => {
    expect(backendNames()).toContain("tmux");
    expect(defaultBackendName({})).toBe("tmux");
    expect(defaultBackendName({ MUSTER_BACKEND: "zellij" })).toBe("zellij");
  });

  it("an unknown name is a clear error naming what is available and how to load more", () => {
    const set = new BackendSet({}, dir);
    expect(() => set.get("nope")).toThrow(
      /backend "nope" is not available here \(available: .*tmux.*MUSTER_BACKEND_MODULE/,
    );
    expect(() => new BackendSet({ MUSTER_BACKEND: "nope" }, dir).get()).toThrow(/"nope"/);
    expect(() => registerBackend("Bad Name", () => set.get("tmux"))).toThrow(/backend name/);
  });

  it("each name is made once per set, with its own state folder, and routed by a ref's backend", () => {
    const made: string[] = [];
    registerBackend("unit-test", (ctx) => {
      made.push(ctx.stateDir);
      return { ...set.get("tmux"), name: "unit-test" } as never;
    });
    const set = new BackendSet({ MUSTER_BACKEND: "unit-test" }, dir);
    expect(set.get().name).toBe("unit-test");
    expect(set.of({ backend: "unit-test", id: "x" }).name).toBe("unit-test");
    expect(set.of({ backend: "tmux", ...tmuxPane }).name).toBe("tmux");
    expect(made).toEqual([path.join(dir, "backends", "unit-test")]);
  });
});
