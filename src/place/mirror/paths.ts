/**
 * Which files of an artifact dir the mirror carries, and which way (artifacts/README.md, layout.ts).
 * inbound (far → near): what the host writes and the parent reads. outbound (near → far): what the parent
 * writes for the host — env.json among them, which may hold secrets and so never flows back. Every path a
 * peer names is checked here before it touches a disk: a relative path of a known shape, one name deep at
 * most, no dot-names (temp files, `..`), nothing absolute.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { openRegular } from "../../util/safe-read.js";
import { type FileStamp, MAX_FILE, ProtocolError } from "./protocol.js";

export const EVENTS = "events.ndjson";
const NAME = "[A-Za-z0-9][A-Za-z0-9._-]{0,199}";
const INBOUND = new RegExp(
  `^(meta\\.json|host\\.json|output\\.md|isolation\\.json|admission\\.json|(outputs|prompts|isolation)/${NAME})$`,
);
const OUTBOUND = new RegExp(
  `^(closing|env\\.json|grant\\.json|session-seed\\.jsonl|events-seed\\.ndjson|(inbox|control|answers|appends)/${NAME}\\.json)$`,
);
/** Top-level inbound files that change in place (the others under their folders never change). */
export const INBOUND_TOP = ["meta.json", "host.json", "output.md", "isolation.json", "admission.json"];
export const INBOUND_DIRS = ["outputs", "prompts", "isolation"];
export const OUTBOUND_TOP = ["closing", "env.json", "grant.json", "session-seed.jsonl", "events-seed.ndjson"];
/** The child's conversation as the parent began it, for a far side that has none yet (relay.ts). */
export const SESSION_SEED = "session-seed.jsonl";
/** The mirror's event log, for a far side made anew whose log is empty (a suspended Sandbox's new Pod). */
export const EVENTS_SEED = "events-seed.ndjson";
export const OUTBOUND_DIRS = ["inbox", "control", "answers", "appends"];

export type Direction = "inbound" | "outbound";

/**
 * Whether a change of `name` in the watched folder `dir` ("." is the artifact dir itself, where only
 * `rootNames` matter) can change what the mirror carries. A host writes many files the mirror leaves alone
 * (runner state, locks, arrivals), and each carried file is written whole through a dot-named temp file
 * whose rename is a change of the file's own name: a whole-dir pass for the others would cost a look at
 * every carried file each time, which many children of one relay hub or one keeper add up.
 */
export function carriedChange(
  rootNames: ReadonlySet<string>,
  dir: string,
  name: string | Buffer | null,
): boolean {
  if (name === null) return true;
  const n = String(name);
  return dir === "." ? rootNames.has(n) : !n.startsWith(".");
}

/** `rel` if it is a path of that direction; a ProtocolError naming it otherwise. */
export function checkRel(rel: string, dir: Direction): string {
  const ok = (dir === "inbound" ? INBOUND : OUTBOUND).test(rel) && !rel.includes("..");
  if (!ok) throw new ProtocolError(`refusing ${dir} path ${JSON.stringify(rel).slice(0, 120)}`);
  return rel;
}

/** Makes rel's folder under root (0700) if missing, refusing one that is not a real folder (a symlink). */
export function ensureParent(root: string, rel: string): string {
  const sub = path.dirname(rel);
  if (sub === ".") return root;
  const dir = path.join(root, sub);
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) fs.mkdirSync(dir, { mode: 0o700 });
  else if (!st.isDirectory()) throw new ProtocolError(`refusing to write under ${sub}/: not a folder`);
  return dir;
}

/** The files of one direction present under root, relative (dot-names skipped). */
export function listFiles(root: string, dir: Direction): string[] {
  const [top, dirs] = dir === "inbound" ? [INBOUND_TOP, INBOUND_DIRS] : [OUTBOUND_TOP, OUTBOUND_DIRS];
  const out = top.filter((f) => fs.lstatSync(path.join(root, f), { throwIfNoEntry: false })?.isFile());
  for (const d of dirs) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, d));
    } catch {
      continue;
    }
    for (const n of names) {
      const rel = `${d}/${n}`;
      if ((dir === "inbound" ? INBOUND : OUTBOUND).test(rel)) out.push(rel);
    }
  }
  return out;
}

/** A file's size and mtime (ms, rounded: what survives a copy's utimes), undefined when not a regular file. */
export function stampOf(file: string): (FileStamp & { ino: number; mtimeRaw: number }) | undefined {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile()) return undefined;
  return { size: st.size, mtimeMs: Math.round(st.mtimeMs), ino: st.ino, mtimeRaw: st.mtimeMs };
}

export const sameStamp = (a: FileStamp | undefined, b: FileStamp | undefined): boolean =>
  !!a && !!b && a.size === b.size && a.mtimeMs === b.mtimeMs;

/** A whole regular file (no symlink followed, at most MAX_FILE) with its stamp; undefined when absent. */
export function readWhole(file: string): { data: Buffer; mtimeMs: number } | undefined {
  let fd: number;
  let size: number;
  try {
    ({ fd, size } = openRegular(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    if (size > MAX_FILE) throw new Error(`${file} is ${size} bytes, over the ${MAX_FILE}-byte mirror limit`);
    const mtimeMs = Math.round(fs.fstatSync(fd).mtimeMs);
    const data = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, data, got, size - got, got);
      if (n <= 0) break;
      got += n;
    }
    return { data: data.subarray(0, got), mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

export const sha256 = (data: Buffer): string => createHash("sha256").update(data).digest("hex");

/** The sha256 of a regular file, undefined when absent. */
export function shaOfFile(file: string): string | undefined {
  const w = readWhole(file);
  return w ? sha256(w.data) : undefined;
}

/** The sha256 of the last ≤ 4 KiB before `size` of an NDJSON log: what proves two copies agree up to there. */
export function tailSha(file: string, size: number): string {
  const n = Math.min(size, 4096);
  const buf = Buffer.alloc(n);
  if (n > 0) {
    const { fd } = openRegular(file);
    try {
      fs.readSync(fd, buf, 0, n, size - n);
    } finally {
      fs.closeSync(fd);
    }
  }
  return sha256(buf);
}
