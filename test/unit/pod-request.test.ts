// A profile's `k8s:` as the Pod place takes it: read from frontmatter, then checked field by field.
import { describe, expect, it } from "vitest";
import { checkPodRequest } from "../../src/place/k8s/place.js";
import { parseProfile } from "../../src/profiles/index.js";

describe("a profile's k8s:", () => {
  it("is read as a map; numbers become quantities; an unknown field is a warning", () => {
    const p = parseProfile(
      "/a/p.md",
      "---\nname: p\nk8s:\n  namespace: agents\n  cpu: 2\n  memory: 1Gi\n  replicas: 3\n  sandboxWarmPool: fast\n---\nx\n",
    );
    expect(p.k8s).toEqual({ namespace: "agents", cpu: "2", memory: "1Gi", sandboxWarmPool: "fast" });
    expect(p.warnings.join("\n")).toMatch(/field "k8s.replicas" is not a Pod field/);
    expect(parseProfile("/a/p.md", "---\nname: p\nk8s: yes\n---\nx\n").warnings.join("\n")).toMatch(
      /field "k8s" must be a map/,
    );
  });

  it("refuses a value the API would refuse, in one line, before anything is made", () => {
    expect(
      checkPodRequest({ namespace: "agents", cpu: "500m", memory: "512Mi", serviceAccount: "agent.sa" }),
    ).toEqual({ namespace: "agents", cpu: "500m", memory: "512Mi", serviceAccount: "agent.sa" });
    const bad: [object, RegExp][] = [
      [{ namespace: "Agents" }, /k8s namespace "Agents" is not a namespace/],
      [{ cpu: "lots" }, /k8s cpu "lots" is not a CPU quantity/],
      [{ memory: "1 GB" }, /k8s memory "1 GB" is not a memory quantity/],
      [{ serviceAccount: "-sa" }, /k8s serviceAccount "-sa" is not a service account's name/],
      [{ image: "--privileged" }, /k8s image "--privileged" is not an image name/],
      [{ env: ["A-B"] }, /k8s env \["A-B"\] is not a list of variable names/],
      [{ sandboxWarmPool: "Fast Pool" }, /k8s sandboxWarmPool "Fast Pool" is not a SandboxWarmPool's name/],
    ];
    for (const [req, said] of bad) expect(() => checkPodRequest(req)).toThrow(said);
  });
});
