/** A JSON-like document as parsed from a config file. */
export type Doc = Record<string, unknown>;

/** One file of a client's configuration and what muster needs in it. */
export interface ConfigEdit {
  file: string;
  format: "json" | "toml";
  /** Key path of muster's part of the file (printed by --dry-run and --json). */
  entryPath: string[];
  /** The document with muster's part merged in; the input is not changed, everything else is kept. */
  merge(doc: Doc): Doc;
  /** What is missing from the document (one phrase each); empty when configured. */
  check(doc: Doc): string[];
}

export const isObject = (v: unknown): v is Doc => typeof v === "object" && v !== null && !Array.isArray(v);

/** A deep copy (config documents are plain JSON/TOML data). */
export const clone = <T>(v: T): T => structuredClone(v);

/** The object at `keys` inside `doc`, created (as {}) where missing; refuses to overwrite a non-object. */
export function objectAt(doc: Doc, keys: string[], file: string): Doc {
  let at = doc;
  for (const k of keys) {
    const next = at[k];
    if (next === undefined) at[k] = {};
    else if (!isObject(next))
      throw new Error(`${file}: "${keys.join(".")}" is not an object; fix it by hand first`);
    at = at[k] as Doc;
  }
  return at;
}

export const getAt = (doc: Doc, keys: string[]): unknown =>
  keys.reduce<unknown>((at, k) => (isObject(at) ? at[k] : undefined), doc);

/** `list` with `items` appended where absent (order kept). */
export function withAll(list: unknown, items: string[]): string[] {
  const have = Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : [];
  return [...(Array.isArray(list) ? (list as string[]) : []), ...items.filter((i) => !have.includes(i))];
}

/** The items of `want` that `list` lacks. */
export const missingFrom = (list: unknown, want: string[]): string[] =>
  want.filter((w) => !(Array.isArray(list) && list.includes(w)));

const sameArray = (a: unknown, b: unknown[]): boolean =>
  Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);

/** Checks shared by every client's entry: the command runs this muster, and the file it names exists. */
export function checkCommand(
  command: unknown,
  args: unknown,
  want: { command: string; args: string[] },
): string[] {
  const got = [command, ...(Array.isArray(args) ? args : [])];
  if (sameArray(got, [want.command, ...want.args])) return [];
  return [
    `the server command is ${JSON.stringify(got)}, not ${JSON.stringify([want.command, ...want.args])}`,
  ];
}
