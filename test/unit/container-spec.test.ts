// What a child's container is made of, as every front end asks for it: the spec's defaults and checks
// (place/container/spec.ts), the CLI's flags, a workflow step's and a profile's `container`, and the start rule.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { containerFrom } from "../../src/cli/container-flags.js";
import { startConflict } from "../../src/core/start.js";
import { engineSaid } from "../../src/place/container/engine.js";
import { DEFAULT_IMAGE, resolveSpec } from "../../src/place/container/spec.js";
import { parseProfile } from "../../src/profiles/index.js";
import { parseWorkflow } from "../../src/workflows/dag/toml.js";

const mock = { runner: "mock", worktree: false, workdir: "/work/repo" };

describe("a container's spec", () => {
  it("defaults: the default image, no network for the mock, the engine's for an agent with a model API, the working directory read-only", () => {
    expect(resolveSpec({}, undefined, mock)).toEqual({
      image: DEFAULT_IMAGE,
      network: "none",
      mount: "ro",
      workdir: "/work/repo",
      mounts: [],
      env: [],
      config: [],
    });
    expect(resolveSpec({}, undefined, { ...mock, runner: "pi" }).network).toBe("default");
    expect(resolveSpec({ network: "container:proxy" }, undefined, mock).network).toBe("container:proxy");
    // A worktree child's work comes as a bundle: its checkout is not mounted, whatever was asked.
    expect(resolveSpec({ mount: "rw" }, undefined, { ...mock, worktree: true }).mount).toBe("none");
  });

  it("the call's fields win over the profile's, field by field", () => {
    const spec = resolveSpec(
      { cpus: 2, env: ["A", "A", "B"] },
      { image: "img:1", cpus: 1, memory: "1g", network: "host" },
      mock,
    );
    expect(spec).toMatchObject({ image: "img:1", cpus: 2, memory: "1g", network: "host", env: ["A", "B"] });
  });

  it("refuses a bad value in one line, before anything is made", () => {
    const bad: [object, RegExp][] = [
      [{ image: "-v /:/host" }, /container image "-v \/:\/host" is not an image name/],
      [{ network: "a b" }, /container network "a b" is not none, default, host/],
      [{ mount: "yes" }, /container mount "yes" is not ro, rw or none/],
      [{ cpus: 0 }, /container cpus 0 is not a number of CPUs/],
      [{ memory: "lots" }, /container memory "lots" is not a size/],
      [{ env: ["NOT-A-NAME"] }, /container env name "NOT-A-NAME" is not a variable's name/],
      [{ mounts: ["relative:/x"] }, /container mount "relative:\/x" is not <absolute here>/],
      [{ mounts: ["/a:/b:rx"] }, /container mount/],
      [{ mounts: ["/a:/b,readonly"] }, /container mount/],
      [{ config: ["/etc"] }, /container config folder "\/etc" is not a folder under your home folder/],
    ];
    for (const [req, said] of bad) {
      const e = (() => {
        try {
          resolveSpec(req, undefined, mock);
        } catch (err) {
          return err as Error;
        }
      })();
      expect(e?.message, JSON.stringify(req)).toMatch(said);
      expect(e?.message.includes("\n")).toBe(false);
    }
  });

  it("a config folder under the home folder is taken by its absolute path; a missing one is refused", () => {
    const home = os.homedir();
    const dir = fs.mkdtempSync(path.join(home, ".mu-spec-"));
    try {
      const spec = resolveSpec({ config: [`~/${path.basename(dir)}`] }, undefined, mock);
      expect(spec.config).toEqual([dir]);
      expect(() => resolveSpec({ config: ["~/.mu-no-such-folder"] }, undefined, mock)).toThrow(
        /does not exist/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the engine's words", () => {
  it("takes the line that says something, without the CLI's prefix, its --help hint or a warning", () => {
    const r = (stderr: string) => ({ exitCode: 125, stdout: "", stderr });
    expect(
      engineSaid(
        r(
          "WARNING: IPv4 forwarding is disabled.\ndocker: Error response from daemon: network x not found\n\nRun 'docker run --help' for more information\n",
        ),
      ),
    ).toBe("Error response from daemon: network x not found");
    expect(engineSaid(r("Error: nope:1: image not known\n"))).toBe("nope:1: image not known");
    expect(engineSaid(r(""))).toBe("exit 125");
  });
});

describe("asking for a container", () => {
  it("--in container[:image] and the flags that shape it; a shaping flag alone is refused", () => {
    expect(containerFrom({})).toBeUndefined();
    expect(containerFrom({ in: "container" })).toEqual({});
    expect(containerFrom({ in: "container:reg.example/img:2" })).toEqual({ image: "reg.example/img:2" });
    expect(
      containerFrom({
        in: "container",
        network: "host",
        mount: "rw",
        cpus: "1.5",
        memory: "2g",
        passEnv: ["TOKEN"],
      }),
    ).toEqual({ network: "host", mount: "rw", cpus: 1.5, memory: "2g", env: ["TOKEN"] });
    expect(() => containerFrom({ network: "none" })).toThrow("--network goes with --in container");
    expect(() => containerFrom({ passEnv: ["A"] })).toThrow("--pass-env goes with --in container");
    expect(() => containerFrom({ in: "vm:x" })).toThrow(/only container\[:<image>\] is known/);
    expect(() => containerFrom({ in: "container", cpus: "many" })).toThrow("--cpus many is not a number");
  });

  it("a workflow step's container: an image, true, or a table; not with on", () => {
    const wf = (step: string) =>
      parseWorkflow(`name = "w"\n[[steps]]\nid = "a"\nagent = "mock"\nprompt = "p"\n${step}\n`, "<t>");
    expect(wf('container = "img:1"').steps[0]!.container).toEqual({ image: "img:1" });
    expect(wf("container = true").steps[0]!.container).toEqual({});
    expect(wf('container = { network = "none", cpus = 1 }').steps[0]!.container).toEqual({
      network: "none",
      cpus: 1,
    });
    expect(() => wf("container = 3")).toThrow(/"container" must be an image's name, true or a table/);
    expect(() => wf('container = "i"\non = "h1"')).toThrow(/give "on" or "container", not both/);
  });

  it("a profile's container: true, an image, or a map; an unknown field is a warning", () => {
    const read = (yaml: string) => parseProfile("/a/p.md", `---\nname: p\n${yaml}\n---\nx\n`);
    expect(read("container: true").container).toEqual({});
    expect(read("container: img:1").container).toEqual({ image: "img:1" });
    const p = read("container:\n  image: img:2\n  memory: 1g\n  volume: /x");
    expect(p.container).toEqual({ image: "img:2", memory: "1g" });
    expect(p.warnings.join("\n")).toMatch(/field "container.volume" is not a container field/);
    expect(read("container: [1]").warnings.join("\n")).toMatch(/field "container" must be true/);
  });

  it("a container is one answer to where a child runs: not with on or place, not on resume", () => {
    expect(startConflict({ container: {}, on: "h1" })).toBe("on_with_place");
    expect(startConflict({ container: {}, place: "local" })).toBe("on_with_place");
    expect(startConflict({ container: {}, resume: "abc" })).toBe("backend_with_resume");
    expect(startConflict({ container: {} })).toBeUndefined();
  });
});
