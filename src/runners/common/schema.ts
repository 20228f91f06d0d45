import * as path from "node:path";
import { writeFileNoFollow } from "../../util/fsx.js";
import type { TurnInput } from "../types.js";
import { runnerDir } from "./shared.js";

/** Which JSON Schemas a CLI's native structured output can take: the rest go the instructed way (in the prompt). */

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A schema whose root is an object: Claude Code turns it into the input schema of its StructuredOutput tool. */
export function objectRooted(schema: object): boolean {
  return (schema as Record<string, unknown>).type === "object";
}

/** Claude Code takes the schema inline, as one argv word: one well under the OS's 128 KiB per word. */
export function inlineObjectSchema(schema: object): boolean {
  return objectRooted(schema) && Buffer.byteLength(JSON.stringify(schema)) <= 64 * 1024;
}

/**
 * A schema OpenAI's strict structured outputs accept (Codex sends `--output-schema` with `strict: true`, and
 * the API refuses any other): an object root, and every object closed (`additionalProperties: false`) with
 * every property required. Walks properties, items, anyOf and $defs/definitions.
 */
export function strictSchema(schema: object): boolean {
  if (!objectRooted(schema)) return false;
  const ok = (s: unknown, depth: number): boolean => {
    if (depth > 64) return false;
    if (!isObj(s)) return false;
    if (s.type === "object" || isObj(s.properties)) {
      const props = isObj(s.properties) ? Object.keys(s.properties) : [];
      const required = Array.isArray(s.required) ? s.required : [];
      if (s.additionalProperties !== false || props.some((p) => !required.includes(p))) return false;
    }
    const children = [
      ...(isObj(s.properties) ? Object.values(s.properties) : []),
      ...(isObj(s.items) ? [s.items] : []),
      ...(Array.isArray(s.anyOf) ? s.anyOf : []),
      ...(isObj(s.$defs) ? Object.values(s.$defs) : []),
      ...(isObj(s.definitions) ? Object.values(s.definitions) : []),
    ];
    return children.every((c) => ok(c, depth + 1));
  };
  return ok(schema, 0);
}

/** The turn's schema as a file in the child's own runner folder (for CLIs that take a path); its path. */
export function schemaFile(input: TurnInput, schema: object): string {
  const file = path.join(runnerDir(input), `output-schema-${input.turnId}.json`);
  // In the child's own folder: a symlink planted there is replaced, never written through.
  writeFileNoFollow(file, `${JSON.stringify(schema, null, 2)}\n`);
  return file;
}
