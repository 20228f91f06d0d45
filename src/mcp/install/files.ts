// Reading and writing client config files: parse or refuse, splice muster's part in, back up, replace.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { isMusterError, MusterError } from "../../base/errors.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { READ_CAPS, readFileBounded } from "../../util/safe-read.js";
import { type ConfigEdit, type Doc, getAt, isObject } from "./edit.js";

/** A config file as found: its text ("" when absent) and parsed document. */
export interface Loaded {
  exists: boolean;
  text: string;
  doc: Doc;
  /** JSON with comments: readable for checks, never rewritten. */
  commented: boolean;
}

const refuse = (message: string, cause?: unknown): MusterError =>
  new MusterError("invalid_config", message, cause !== undefined ? { cause } : undefined);

/** JSON text without // and /* *\/ comments and trailing commas (strings kept); for reading only. */
export function stripJsonComments(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

function parseJson(file: string, text: string): { doc: unknown; commented: boolean } {
  if (text.trim() === "") return { doc: {}, commented: false };
  try {
    return { doc: JSON.parse(text), commented: false };
  } catch (e) {
    try {
      return { doc: JSON.parse(stripJsonComments(text)), commented: true };
    } catch {
      throw refuse(`cannot parse ${file}: ${(e as Error).message.split("\n")[0]}; it is left untouched`, e);
    }
  }
}

/** Reads and parses `edit.file`; a file that does not parse is refused with one line. */
export function load(edit: Pick<ConfigEdit, "file" | "format">): Loaded {
  let text = "";
  try {
    // Bounded and non-blocking: a FIFO or a device here is refused, not waited on. A symlink (dotfiles) is fine.
    text = readFileBounded(edit.file, READ_CAPS.stateJson, { follow: true }).toString("utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      throw refuse(
        isMusterError(e)
          ? `${e.message}; it is left untouched`
          : `cannot read ${edit.file}: ${(e as Error).message}`,
        e,
      );
    return { exists: false, text: "", doc: {}, commented: false };
  }
  let doc: unknown;
  let commented = false;
  if (edit.format === "toml") {
    try {
      doc = parseToml(text);
    } catch (e) {
      throw refuse(
        `cannot parse ${edit.file}: ${(e as Error).message.split("\n")[0]}; it is left untouched`,
        e,
      );
    }
  } else ({ doc, commented } = parseJson(edit.file, text));
  if (!isObject(doc)) throw refuse(`${edit.file} is not an object at the top; it is left untouched`);
  return { exists: true, text, doc, commented };
}

/** JSON with object keys sorted: TOML puts sub-tables after plain keys, so order alone is no difference. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );

const TOML_HEADER = /^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$/;
const keyPath = (header: string): string[] =>
  header.split(".").map((k) =>
    k
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .replace(/^'(.*)'$/, "$1"),
  );

/**
 * TOML text with the table at `entry` (and its sub-tables) replaced by `value`, everything else byte for
 * byte; checked by parsing the result, so a layout it cannot splice safely (inline tables, dotted keys) is
 * refused rather than half-written.
 */
export function spliceToml(file: string, text: string, entry: string[], merged: Doc): string {
  const value = getAt(merged, entry);
  const lines = text.split("\n");
  const kept: string[] = [];
  let inEntry = false;
  let at = -1;
  for (const line of lines) {
    const m = TOML_HEADER.exec(line);
    if (m) {
      const k = keyPath(m[1]!);
      inEntry = k.length >= entry.length && entry.every((e, i) => k[i] === e);
      if (inEntry && at < 0) at = kept.length;
    }
    if (!inEntry) kept.push(line);
  }
  const section = stringifyToml(entry.reduceRight<unknown>((v, k) => ({ [k]: v }), value) as Doc).trimEnd();
  if (at < 0) {
    while (kept.length > 0 && kept.at(-1)!.trim() === "") kept.pop();
    kept.push(...(kept.length > 0 ? [""] : []), section, "");
  } else kept.splice(at, 0, section, "");
  const out = kept.join("\n");
  let reparsed: unknown;
  try {
    reparsed = parseToml(out);
  } catch {
    reparsed = undefined;
  }
  if (canonical(reparsed) !== canonical(merged))
    throw refuse(
      `cannot place [${entry.join(".")}] in ${file} safely (inline table or dotted keys?); edit it by hand`,
    );
  return out;
}

/** The file's new text: JSON with the indentation it had (2 when new), TOML spliced. */
export function render(edit: ConfigEdit, loaded: Loaded, merged: Doc): string {
  if (edit.format === "toml") return spliceToml(edit.file, loaded.text, edit.entryPath, merged);
  const indent = /^\{\s*\n([ \t]+)"/.exec(loaded.text)?.[1] ?? 2;
  return `${JSON.stringify(merged, null, indent)}\n`;
}

/**
 * muster's part of the file as it would be written, in the file's own format: its entry under the whole key
 * path (`{"mcpServers": {"muster": …}}`, `[mcp_servers.muster]`), or the whole new text for an edit of the
 * whole file. For a new file it is exactly the file.
 */
export function preview(edit: ConfigEdit, loaded: Loaded, merged: Doc, text: string): string {
  if (edit.entryPath.length === 0) return text;
  const wrapped = edit.entryPath.reduceRight<unknown>((v, k) => ({ [k]: v }), getAt(merged, edit.entryPath));
  if (edit.format === "toml") return `${stringifyToml(wrapped as Doc).trimEnd()}\n`;
  const indent = /^\{\s*\n([ \t]+)"/.exec(loaded.text)?.[1] ?? 2;
  return `${JSON.stringify(wrapped, null, indent)}\n`;
}

/** A timestamp for backup names: sortable, no colons. */
const stamp = (): string =>
  new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");

/**
 * Writes `text` at `target` (where `file` leads: see write-target.ts) by temp file and rename in the
 * target's folder, after copying the old file aside next to `file`.
 */
export function writeWithBackup(
  file: string,
  target: string,
  exists: boolean,
  text: string,
): string | undefined {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  let backup: string | undefined;
  let mode = 0o644;
  if (exists) {
    mode = fs.statSync(target).mode & 0o777;
    backup = `${file}.bak-${stamp()}`;
    for (let n = 1; fs.existsSync(backup); n++) backup = `${file}.bak-${stamp()}-${n}`;
    fs.copyFileSync(target, backup, fs.constants.COPYFILE_EXCL);
  }
  writeFileAtomic(target, text, mode);
  return backup;
}
