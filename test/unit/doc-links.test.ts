// Every relative link in README.md and docs/*.md leads somewhere: the file exists, and a
// `#anchor` names a heading of that file by its GitHub-style slug. The reference moved out of the README
// into docs/; a link left pointing at a section that moved fails here, not in a reader's browser.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DOCS, REPO } from "../helpers/docs.js";

/** The lines of a markdown text outside fenced code blocks, with their 1-based numbers (CommonMark's fences). */
function proseLines(md: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null; // the opening run of backticks or tildes while inside a block
  md.split("\n").forEach((text, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text);
    if (fence === null) {
      // A backtick fence's info string has no backtick: ```` ```json ```` is inline code, not a fence.
      if (m && !(m[1]![0] === "`" && m[2]!.includes("`"))) fence = m[1]!;
      else out.push({ line: i + 1, text });
    } else if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && m[2]!.trim() === "")
      fence = null;
  });
  return out;
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped (but `-`, `_`), spaces become `-`. */
function slug(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a markdown text's headings get, duplicates numbered as GitHub numbers them (`-1`, `-2`). */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of proseLines(md)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target outside code (fenced blocks and inline code spans), with its line. */
function links(md: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text } of proseLines(md)) {
    const prose = text.replace(/`[^`]*`/g, "code");
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ line, target: m[1]! });
  }
  return out;
}

/** What is wrong with each relative link of `file` (a path from `root`); empty when every one resolves. */
function brokenLinks(root: string, file: string): string[] {
  const md = fs.readFileSync(path.join(root, file), "utf8");
  const bad: string[] = [];
  for (const { line, target } of links(md)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
    const hash = target.indexOf("#");
    const rel = hash < 0 ? target : target.slice(0, hash);
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const dest = rel === "" ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), rel);
    const where = `${file}:${line}: ${target}`;
    if (!fs.existsSync(dest)) {
      bad.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!dest.endsWith(".md") || !fs.statSync(dest).isFile()) {
      bad.push(`${where}: an anchor into a file that is not markdown`);
      continue;
    }
    if (!anchors(fs.readFileSync(dest, "utf8")).has(anchor))
      bad.push(`${where}: no heading with that anchor`);
  }
  return bad;
}

describe("links in the README and docs/", () => {
  it("covers the README and the reference in docs/, the contributors' guide included", () => {
    expect(DOCS).toEqual(
      expect.arrayContaining(["README.md", "docs/contributing.md", "docs/cli.md", "docs/architecture.md"]),
    );
    // The README links to the reference: those links are what this test is for.
    expect(links(fs.readFileSync(path.join(REPO, "README.md"), "utf8")).length).toBeGreaterThanOrEqual(10);
  });

  it.each(DOCS)("every relative link in %s resolves, anchors included", (file) => {
    expect(brokenLinks(REPO, file)).toEqual([]);
  });

  it("slugs headings as GitHub does", () => {
    expect(slug("Supervisor: `muster top`")).toBe("supervisor-muster-top");
    expect(slug("Use from a coding agent (MCP)")).toBe("use-from-a-coding-agent-mcp");
    expect(slug("Sandboxed workflows (model-written programs)")).toBe(
      "sandboxed-workflows-model-written-programs",
    );
    expect(slug("Agents, models and reasoning")).toBe("agents-models-and-reasoning");
    expect([...anchors("# A\n## A\n```sh\n# not a heading\n```\n## B c\n")]).toEqual(["a", "a-1", "b-c"]);
  });

  it("reports a missing file, a missing anchor, and skips code and absolute URLs", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "muster-doc-links-"));
    try {
      fs.writeFileSync(path.join(dir, "there.md"), "# There\n\n## A section\n");
      fs.writeFileSync(
        path.join(dir, "here.md"),
        [
          "# Here",
          "[ok](there.md) [ok](there.md#a-section) [ok](#here) [web](https://example.com/x.md)",
          "[gone](nowhere.md) [bad anchor](there.md#no-such) [bad local](#nope)",
          "`[in code](nowhere.md)`",
          "```md",
          "[in a block](nowhere.md)",
          "```",
        ].join("\n"),
      );
      expect(brokenLinks(dir, "here.md")).toEqual([
        "here.md:3: nowhere.md: no such file",
        "here.md:3: there.md#no-such: no heading with that anchor",
        "here.md:3: #nope: no heading with that anchor",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
