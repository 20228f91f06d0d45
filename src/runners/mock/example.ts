/**
 * The mock's answer to a prompt that demands one JSON value matching a schema (a structured step's
 * instruction): a small value built from that schema, so a workflow with structured steps runs on the mock.
 */

// The phrase both the first demand and the corrective one use (workflows/structured.ts), then the schema.
const DEMAND = /matching this JSON Schema:\n(?:\(.*\)\n)?```json\n([\s\S]*?)\n```/g;

/** The schema the prompt's last demand names, if the prompt makes one and the schema parses. */
export function demandedSchema(prompt: string): object | undefined {
  const last = [...prompt.matchAll(DEMAND)].at(-1)?.[1];
  if (last === undefined) return undefined;
  try {
    const s = JSON.parse(last) as unknown;
    return typeof s === "object" && s !== null && !Array.isArray(s) ? s : undefined;
  } catch {
    return undefined;
  }
}

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** A value the schema accepts for the common keywords (type, enum, const, properties, items, bounds). */
export function exampleOf(schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const k of ["oneOf", "anyOf", "allOf"] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length > 0) return exampleOf(alts[0], depth + 1);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type =
    types.find((t) => t !== "null") ??
    (schema.properties ? "object" : schema.items ? "array" : types[0] === "null" ? "null" : "string");
  const num = (k: string): number | undefined =>
    typeof schema[k] === "number" ? (schema[k] as number) : undefined;
  switch (type) {
    case "object": {
      const props = isSchema(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const keys = [...new Set([...Object.keys(props), ...required])];
      return Object.fromEntries(keys.map((k) => [k, exampleOf(props[k] ?? {}, depth + 1)]));
    }
    case "array": {
      const n = Math.min(Math.max(num("minItems") ?? 1, 1), num("maxItems") ?? 1);
      return Array.from({ length: n }, () => exampleOf(schema.items ?? {}, depth + 1));
    }
    case "boolean":
      return true;
    case "integer":
      return Math.ceil(num("minimum") ?? 0);
    case "number":
      return num("minimum") ?? 0;
    case "null":
      return null;
    default: {
      const min = num("minLength") ?? 0;
      const max = num("maxLength") ?? Number.POSITIVE_INFINITY;
      return "example".padEnd(min, "e").slice(0, Math.max(min, Math.min(7, max)));
    }
  }
}

/** The answer: the value in a ```json block, as the demand asks. */
export function structuredAnswer(schema: object): string {
  return `\`\`\`json\n${JSON.stringify(exampleOf(schema), null, 2)}\n\`\`\`\n`;
}
