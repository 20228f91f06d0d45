import * as fs from "node:fs";
import * as path from "node:path";

/** The repository's root. */
export const REPO = path.resolve(import.meta.dirname, "../..");

/** Every document a reader is sent to, by its path from the root: the README and each docs/*.md. */
export const DOCS = [
  "README.md",
  ...fs
    .readdirSync(path.join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
