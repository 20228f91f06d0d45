// muster's table edited inside a TOML file's own text: only the values muster changes are replaced and the
// keys it adds inserted; every other byte (comments, also inside muster's table, layout, CRLF) is kept.
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { MusterError } from "../../base/errors.js";
import { type Doc, getAt, isObject } from "./edit.js";

/** A TOML statement by offsets into the text: `next` is where the line after it starts. */
type Statement =
  | { kind: "header"; start: number; path: string[]; array: boolean; next: number }
  | {
      kind: "kv";
      start: number;
      key: string[];
      valueStart: number;
      valueEnd: number;
      /** Comments inside a multi-line value (kept above the key when the value is replaced). */
      comments: string[];
      next: number;
    };

class Unreadable extends Error {}

const isSpace = (c: string | undefined) => c === " " || c === "\t";
const skipSpaces = (text: string, p: number): number => {
  while (isSpace(text[p])) p++;
  return p;
};
const lineEnd = (text: string, p: number): number => {
  const n = text.indexOf("\n", p);
  return n < 0 ? text.length : n;
};
const nextLine = (text: string, p: number): number => Math.min(lineEnd(text, p) + 1, text.length);
const BARE = /[A-Za-z0-9_-]+/y;

/** A dotted key at `p`: its parts (quoted ones unquoted) and where it ends. */
function readKey(text: string, p: number): { keys: string[]; end: number } {
  const keys: string[] = [];
  for (;;) {
    p = skipSpaces(text, p);
    const c = text[p];
    if (c === '"' || c === "'") {
      const end = stringEnd(text, p);
      const raw = text.slice(p, end);
      let key = raw.slice(1, -1);
      if (c === '"')
        try {
          key = JSON.parse(raw) as string;
        } catch {
          // a TOML-only escape: compared as written
        }
      keys.push(key);
      p = end;
    } else {
      BARE.lastIndex = p;
      if (!BARE.test(text)) throw new Unreadable();
      keys.push(text.slice(p, BARE.lastIndex));
      p = BARE.lastIndex;
    }
    p = skipSpaces(text, p);
    if (text[p] !== ".") return { keys, end: p };
    p++;
  }
}

/** The end of the (single- or multi-line) string starting at `p`. */
function stringEnd(text: string, p: number): number {
  const q = text[p]!;
  const triple = text.startsWith(q.repeat(3), p);
  let j = p + (triple ? 3 : 1);
  while (j < text.length) {
    if (q === '"' && text[j] === "\\") j += 2;
    else if (triple && text.startsWith(q.repeat(3), j)) {
      // Up to two more quotes may close it: """a""""" is a"".
      let k = j + 3;
      while (k < j + 5 && text[k] === q) k++;
      return k;
    } else if (!triple && text[j] === q) return j + 1;
    else if (!triple && text[j] === "\n") break;
    else j++;
  }
  throw new Unreadable();
}

/** The end of the value at `p` (strings, nested arrays and inline tables skipped whole). */
function valueEnd(text: string, p: number, comments: string[]): number {
  const c = text[p];
  if (c === '"' || c === "'") return stringEnd(text, p);
  if (c === "[" || c === "{") {
    let depth = 0;
    let j = p;
    while (j < text.length) {
      const ch = text[j]!;
      if (ch === '"' || ch === "'") j = stringEnd(text, j);
      else if (ch === "#") {
        const end = lineEnd(text, j);
        comments.push(text.slice(j, end).replace(/\r$/, ""));
        j = end;
      } else {
        if (ch === "[" || ch === "{") depth++;
        else if (ch === "]" || ch === "}") depth--;
        j++;
        if (depth === 0) return j;
      }
    }
    throw new Unreadable();
  }
  // A number, boolean or date (a date may hold a space): up to a comment or the line's end.
  let j = p;
  while (j < text.length && text[j] !== "#" && text[j] !== "\n") j++;
  while (j > p && (isSpace(text[j - 1]) || text[j - 1] === "\r")) j--;
  if (j === p) throw new Unreadable();
  return j;
}

/** After a statement: spaces, an optional comment, the line's end. */
function restOfLine(text: string, p: number): number {
  p = skipSpaces(text, p);
  if (text[p] === "#") p = lineEnd(text, p);
  if (text[p] === "\r") p++;
  if (p < text.length && text[p] !== "\n") throw new Unreadable();
  return Math.min(p + 1, text.length);
}

/** The headers and key/value lines of a TOML text (which has already parsed). */
function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let p = 0;
  while (p < text.length) {
    const start = p;
    p = skipSpaces(text, p);
    const c = text[p];
    if (c === "\n" || c === "\r" || c === "#") p = nextLine(text, p);
    else if (c === "[") {
      const array = text[p + 1] === "[";
      const { keys, end } = readKey(text, p + (array ? 2 : 1));
      const close = array ? "]]" : "]";
      if (!text.startsWith(close, end)) throw new Unreadable();
      p = restOfLine(text, end + close.length);
      out.push({ kind: "header", start, path: keys, array, next: p });
    } else if (c !== undefined) {
      const { keys, end } = readKey(text, p);
      if (text[end] !== "=") throw new Unreadable();
      const valueStart = skipSpaces(text, end + 1);
      const comments: string[] = [];
      const valueEnd_ = valueEnd(text, valueStart, comments);
      p = restOfLine(text, valueEnd_);
      out.push({ kind: "kv", start, key: keys, valueStart, valueEnd: valueEnd_, comments, next: p });
    }
  }
  return out;
}

/** JSON with object keys sorted: TOML puts sub-tables after plain keys, so order alone is no difference. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );

const samePrefix = (path: string[], entry: string[]) =>
  path.length >= entry.length && entry.every((e, i) => path[i] === e);

/** The ranges of the tables at `path` and below it, each up to the next header (or the text's end). */
function subTables(
  stmts: Statement[],
  end: number,
  path: string[],
): { at: number; to: number; text: string }[] {
  const headers = stmts.filter((s) => s.kind === "header");
  return headers.flatMap((h, i) =>
    samePrefix(h.path, path) ? [{ at: h.start, to: headers[i + 1]?.start ?? end, text: "" }] : [],
  );
}

/** The line ending a text uses (its first line's), LF for a text with none. */
export const eolOf = (text: string): string => /\r?\n/.exec(text)?.[0] ?? "\n";

/**
 * TOML text with muster's table at `entry` brought to its value in `merged`: each changed value replaced
 * where it stands, each new key added after the table's last key, each dropped key's lines (or sub-table)
 * removed, a missing table added (before its sub-tables, else at the end); everything else byte for byte, new lines in the file's line ending. Checked
 * by parsing the result, so a layout it cannot edit safely (inline tables, dotted keys) is refused rather
 * than half-written.
 */
export function spliceToml(file: string, text: string, entry: string[], before: Doc, merged: Doc): string {
  const cannot = () =>
    new MusterError(
      "invalid_config",
      `cannot place [${entry.join(".")}] in ${file} safely (inline table or dotted keys?); edit it by hand`,
    );
  const eol = eolOf(text);
  const had = getAt(before, entry);
  const old: Doc = isObject(had) ? had : {};
  const want = getAt(merged, entry) as Doc;
  const changed = Object.keys(want).filter((k) => canonical(want[k]) !== canonical(old[k]));
  // muster sets plain values only: a sub-table it would change is not spliced.
  if (changed.some((k) => isObject(want[k]))) throw cannot();
  // Keys dropped when the entry switches form (a command for a URL, or back).
  const dropped = Object.keys(old).filter((k) => !(k in want));
  let stmts: Statement[];
  try {
    stmts = statements(text);
  } catch (e) {
    if (e instanceof Unreadable) throw cannot();
    throw e;
  }
  const keyLine = (k: string) => stringifyToml({ [k]: want[k] }).trimEnd();
  const edits: { at: number; to: number; text: string }[] = [];
  const headerAt = stmts.findIndex(
    (s) => s.kind === "header" && !s.array && canonical(s.path) === canonical(entry),
  );
  if (headerAt >= 0) {
    const body: Extract<Statement, { kind: "kv" }>[] = [];
    for (let j = headerAt + 1; j < stmts.length; j++) {
      const s = stmts[j]!;
      if (s.kind === "header") break;
      body.push(s);
    }
    for (const k of dropped) {
      const lines = body.filter((s) => s.key[0] === k).map((s) => ({ at: s.start, to: s.next, text: "" }));
      const tables = subTables(stmts, text.length, [...entry, k]);
      if (lines.length + tables.length === 0) throw cannot();
      edits.push(...lines, ...tables);
    }
    const added: string[] = [];
    for (const k of changed) {
      const kv = body.find((s) => s.key.length === 1 && s.key[0] === k);
      const line = keyLine(k);
      if (!kv) {
        added.push(line);
        continue;
      }
      edits.push({ at: kv.valueStart, to: kv.valueEnd, text: line.slice(line.indexOf(" = ") + 3) });
      const indent = text.slice(kv.start, skipSpaces(text, kv.start));
      if (kv.comments.length > 0)
        edits.push({ at: kv.start, to: kv.start, text: kv.comments.map((c) => indent + c + eol).join("") });
    }
    if (added.length > 0) {
      const last = body.at(-1);
      const at = (last ?? stmts[headerAt]!).next;
      const indent = last ? text.slice(last.start, skipSpaces(text, last.start)) : "";
      const lead = at === text.length && !text.endsWith("\n") ? eol : "";
      edits.push({ at, to: at, text: lead + added.map((l) => indent + l + eol).join("") });
    }
  } else {
    if (dropped.length > 0) throw cannot();
    const part = Object.fromEntries(changed.map((k) => [k, want[k]]));
    const section = stringifyToml(entry.reduceRight<unknown>((v, k) => ({ [k]: v }), part) as Doc)
      .trimEnd()
      .split("\n")
      .join(eol);
    const sub = stmts.find((s) => s.kind === "header" && samePrefix(s.path, entry));
    if (sub) edits.push({ at: sub.start, to: sub.start, text: section + eol + eol });
    else {
      let lead = "";
      if (text !== "") {
        if (!text.endsWith("\n")) lead += eol;
        if (!/(^|\n)[ \t]*\r?\n$/.test(text + lead)) lead += eol;
      }
      edits.push({ at: text.length, to: text.length, text: lead + section + eol });
    }
  }
  let out = text;
  for (const e of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.to);
  let reparsed: unknown;
  try {
    reparsed = parseToml(out);
  } catch {
    reparsed = undefined;
  }
  if (canonical(reparsed) !== canonical(merged)) throw cannot();
  return out;
}
