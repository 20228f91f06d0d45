import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Registry, type RegistryEntry } from "../../src/core/registry.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function registry(): Registry {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-registry-"));
  dirs.push(d);
  return new Registry(path.join(d, "registry.json"), "p");
}

const entry = (id: string): RegistryEntry => ({
  id,
  agent: "mock",
  runner: "mock",
  parent: null,
  createdAt: new Date(0).toISOString(),
  cwd: "/",
  pane: null,
});

describe("registry updates asked for at once", () => {
  it("all land, in the order asked, each seeing the ones before it", async () => {
    const r = registry();
    const seen = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        r.update((doc) => {
          const before = Object.keys(doc.children).length;
          doc.children[`c${i}`] = entry(`c${i}`);
          return before;
        }),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(Object.keys(r.read().children)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`));
  });

  it("updates awaited one after another each land (the next is asked for once the last resolved)", async () => {
    const r = registry();
    for (let i = 0; i < 20; i++)
      await r.update((doc) => {
        doc.children[`s${i}`] = entry(`s${i}`);
      });
    expect(Object.keys(r.read().children)).toHaveLength(20);
  });

  it("one that throws half-way rejects alone and leaves nothing of itself; the others land", async () => {
    const r = registry();
    const results = await Promise.allSettled([
      r.update((doc) => {
        doc.children.a = entry("a");
      }),
      r.update((doc) => {
        doc.children.half = entry("half");
        throw new Error("refused after a change");
      }),
      r.update((doc) => {
        doc.children.b = entry("b");
      }),
    ]);
    expect(results.map((x) => x.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("refused after a change");
    expect(Object.keys(r.read().children).sort()).toEqual(["a", "b"]);
  });

  it("an update asked for while a batch is being written comes in the next one", async () => {
    const r = registry();
    let second: Promise<void> | undefined;
    await r.update((doc) => {
      doc.children.first = entry("first");
      second = r.update((d) => {
        expect(d.children.first).toBeDefined();
        d.children.second = entry("second");
      });
    });
    await second;
    expect(Object.keys(r.read().children).sort()).toEqual(["first", "second"]);
  });
});
