// Reading and writing client config files: parse or refuse, splice muster's part in, back up, replace.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseToml, stringify as stringifyToml, TomlError } from "smol-toml";
import { isMusterError, MusterError } from "../../base/errors.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { READ_CAPS, readFileBounded } from "../../util/safe-read.js";
import { type ConfigEdit, type Doc, getAt, isObject } from "./edit.js";
import { jsonErrorAt, lineCol, stripJsonComments } from "./json-text.js";
import { eolOf, spliceToml } from "./toml-splice.js";

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

function parseJson(file: string, text: string): { doc: unknown; commented: boolean } {
  if (text.trim() === "") return { doc: {}, commented: false };
  try {
    return { doc: JSON.parse(text), commented: false };
  } catch {
    // Comments blanked in place: an error in the stripped text is at the file's own line and column.
    const stripped = stripJsonComments(text);
    try {
      return { doc: JSON.parse(stripped), commented: true };
    } catch (e) {
      const at = jsonErrorAt(stripped);
      if (!at) throw refuse(`cannot parse ${file}: ${(e as Error).message}; it is left untouched`, e);
      const { line, column } = lineCol(text, at.offset);
      throw refuse(`${file}:${line}:${column}: invalid JSON: ${at.reason}; it is left untouched`, e);
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
      const what = (e as Error).message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      if (!(e instanceof TomlError))
        throw refuse(`cannot parse ${edit.file}: ${what}; it is left untouched`, e);
      throw refuse(`${edit.file}:${e.line}:${e.column}: invalid TOML: ${what}; it is left untouched`, e);
    }
  } else ({ doc, commented } = parseJson(edit.file, text));
  if (!isObject(doc)) throw refuse(`${edit.file} is not an object at the top; it is left untouched`);
  return { exists: true, text, doc, commented };
}

/** The file's new text: JSON with the indentation and line ending it had (2 and LF when new), TOML spliced. */
export function render(edit: ConfigEdit, loaded: Loaded, merged: Doc): string {
  if (edit.format === "toml") return spliceToml(edit.file, loaded.text, edit.entryPath, loaded.doc, merged);
  const indent = /^\{\s*\n([ \t]+)"/.exec(loaded.text)?.[1] ?? 2;
  // JSON.stringify escapes line breaks inside strings: every "\n" it returns ends a line.
  return `${JSON.stringify(merged, null, indent)}\n`.split("\n").join(eolOf(loaded.text));
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
