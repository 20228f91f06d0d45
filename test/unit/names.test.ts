import { describe, expect, it } from "vitest";
import { resolveChildId } from "../../src/core/children.js";
import { assertChildName, assertNameFree, isChildName } from "../../src/core/names.js";
import type { RegistryDoc, RegistryEntry } from "../../src/core/registry.js";

const entry = (id: string, name?: string): RegistryEntry => ({
  id,
  ...(name !== undefined ? { name } : {}),
  agent: "mock",
  runner: "mock",
  parent: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  cwd: "/",
  pane: null,
});
const A = "01900000-0000-7000-8000-00000000cafe";
const B = "01900000-0000-7000-8000-0000000beef1";
const doc: RegistryDoc = { v: 1, primary: A, children: { [A]: entry(A, "reviewer"), [B]: entry(B) } };

describe("child names", () => {
  it("accepts short labels of letters, digits, . _ -; refuses the rest with one line", () => {
    for (const ok of ["reviewer", "r.1", "A_b-c", "x9", "z".repeat(32)]) expect(assertChildName(ok)).toBe(ok);
    for (const bad of ["", "-rf", ".hidden", "a/b", "../x", "a b", "é", "z".repeat(33), "a;b", "a\nb"])
      expect(() => assertChildName(bad)).toThrow(/^invalid name .*: use 1-32 letters/);
    // Only hex digits and dashes would read as an id prefix.
    for (const idLike of ["cafe", "beef1", "0123-abcd", "ABC"])
      expect(() => assertChildName(idLike)).toThrow(/would read as a child id/);
  });

  it("a name resolves exactly and before ids; an id-like string is never taken for a name", () => {
    expect(resolveChildId(doc, "reviewer").id).toBe(A);
    expect(resolveChildId(doc, "cafe").id).toBe(A); // an id suffix, not a name
    expect(resolveChildId(doc, "beef1").id).toBe(B);
    expect(() => resolveChildId(doc, "Reviewer")).toThrow(/no child of this primary is named "Reviewer"/);
    expect(isChildName("cafe")).toBe(false);
    expect(() => assertNameFree(doc, "reviewer")).toThrow(/name "reviewer" is taken by child 0000cafe/);
    expect(() => assertNameFree(doc, "other")).not.toThrow();
  });
});
