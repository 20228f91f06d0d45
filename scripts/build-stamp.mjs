// Whether dist/ is the build of the sources as they are now (test/unit/build-stamp.test.ts). A build records a
// hash of what it was built from in dist/.build-stamp; `npm install` and `npm link` run `prepare`, which builds
// only when that hash differs, or when dist/ or one of its entry files is missing. Contents, not mtimes: a git
// checkout or an npm rewrite of an unchanged lockfile touches files without changing them.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const STAMP = path.join("dist", ".build-stamp");
/** What a build reads besides src/: the compiler's settings, the bundler script, the dependencies bundled in. */
const INPUT_FILES = [
  "tsconfig.json",
  "package.json",
  "package-lock.json",
  "scripts/bundle.mjs",
  "scripts/build.mjs",
];
/** Files every build leaves; one missing means dist/ was cleaned or half-built. */
export const OUTPUTS = [
  "dist/index.js",
  "dist/cli/main.js",
  "dist/cli/child-commands.js",
  "dist/cli/bundle/main.js",
  "dist/cli/bundle/commands.cjs",
  "dist/util/code-cache.cjs",
  "dist/cli/child-commands.cjs",
  "dist/cli/ask.cjs",
  "dist/cli/bundle/commands.json",
  "dist/child/host.bundle.js",
  "dist/mux/pty/holder.cjs",
];

/** Every file under dir, relative to root, sorted; none when dir is missing. */
function filesUnder(root, dir) {
  const out = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop();
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, d), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const rel = path.join(d, e.name);
      if (e.isDirectory()) stack.push(rel);
      else if (e.isFile()) out.push(rel);
    }
  }
  return out.sort();
}

/** A hash of the build's inputs: each file's path and content (a missing input file counts as absent). */
export function inputsHash(root) {
  const h = createHash("sha256");
  for (const rel of [...filesUnder(root, "src"), ...INPUT_FILES]) {
    let data;
    try {
      data = fs.readFileSync(path.join(root, rel));
    } catch {
      continue;
    }
    h.update(`${rel}\0${data.length}\0`);
    h.update(data);
  }
  return h.digest("hex");
}

/** Why dist/ needs a build (one line), or null when it is the build of these inputs. */
export function staleReason(root, hash = inputsHash(root)) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(root, STAMP), "utf8"));
  } catch {
    return fs.existsSync(path.join(root, "dist")) ? "dist/ has no build stamp" : "dist/ is missing";
  }
  const missing = OUTPUTS.find((f) => !fs.existsSync(path.join(root, f)));
  if (missing) return `${missing} is missing`;
  if (stamp?.inputs !== hash) return "the sources changed since the last build";
  return null;
}

/** Records that dist/ is the build of inputs hashed as `hash` (taken before the build began). */
export function writeStamp(root, hash) {
  const file = path.join(root, STAMP);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ inputs: hash, builtAt: new Date().toISOString() })}\n`);
  fs.renameSync(tmp, file);
}
