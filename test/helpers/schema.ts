/** Validators for the artifact protocol's JSON Schemas (artifacts/schema/*.schema.json), for tests. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

export const SCHEMA_DIR = fileURLToPath(new URL("../../artifacts/schema/", import.meta.url));

export interface Validators {
  /** Errors of one events.ndjson record (schema + the cross-field naming rules); empty if valid. */
  validateEvent(obj: unknown): string[];
  /** Errors of a meta.json object; empty if valid. */
  validateMeta(obj: unknown): string[];
  /** Errors of one JSONL agent message; empty if valid. */
  validateAgentMessage(obj: unknown): string[];
  /** Errors of an inbox item; with `fileName`, also checks it is `<arrival>-<turnId>.json`. Empty if valid. */
  validateInboxItem(obj: unknown, fileName?: string): string[];
  /** Errors of a control/ request; with `fileName`, also checks `<15-digit ms>-<8 hex>.json`. Empty if valid. */
  validateControlRequest(obj: unknown, fileName?: string): string[];
}

export function loadSchema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(`${SCHEMA_DIR}${name}`, "utf8")) as Record<string, unknown>;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath === "" ? "(root)" : e.instancePath;
    const allowed = "allowedValues" in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : "";
    const constant = "allowedValue" in e.params ? ` ${JSON.stringify(e.params.allowedValue)}` : "";
    // `not` says nothing on its own; name the shape that was ruled out.
    const ruledOut = e.keyword === "not" ? `: ${JSON.stringify(e.schema)}` : "";
    return `${where} ${e.message ?? e.keyword}${allowed}${constant}${ruledOut}`;
  });
}

function checker(validate: ValidateFunction): (obj: unknown) => string[] {
  return (obj) => (validate(obj) ? [] : formatErrors(validate.errors));
}

/** Rules JSON Schema cannot state: snapshot and prompt paths are named after the record's own ids. */
function namingErrors(obj: unknown): string[] {
  if (typeof obj !== "object" || obj === null) return [];
  const ev = obj as {
    eventId?: unknown;
    turnId?: unknown;
    output?: { path?: unknown };
    promptPath?: unknown;
  };
  const errors: string[] = [];
  const outPath = ev.output?.path;
  if (typeof outPath === "string" && outPath !== `outputs/${String(ev.eventId)}.md`) {
    errors.push(`/output/path must be outputs/<eventId>.md of this record (got ${JSON.stringify(outPath)})`);
  }
  if (typeof ev.promptPath === "string" && ev.promptPath !== `prompts/${String(ev.turnId)}.txt`) {
    errors.push(
      `/promptPath must be prompts/<turnId>.txt of this record (got ${JSON.stringify(ev.promptPath)})`,
    );
  }
  return errors;
}

function inboxNameErrors(obj: unknown, fileName: string | undefined): string[] {
  if (fileName === undefined) return [];
  const turnId = typeof obj === "object" && obj !== null ? (obj as { turnId?: unknown }).turnId : undefined;
  return /^\d{16}-/.test(fileName) && fileName.slice(17) === `${String(turnId)}.json`
    ? []
    : [`file name must be <16-digit arrival>-<turnId>.json of this item (got ${JSON.stringify(fileName)})`];
}

const CONTROL_NAME = /^[0-9]{15}-[0-9a-f]{8}\.json$/;

function controlNameErrors(fileName: string | undefined): string[] {
  if (fileName === undefined || CONTROL_NAME.test(fileName)) return [];
  return [`file name must be <15-digit ms>-<8 hex>.json (got ${JSON.stringify(fileName)})`];
}

let cached: Validators | undefined;

/** Compiles the schemas once (ajv, draft 2020-12, strict except strictRequired, discriminator on). */
export function loadValidators(): Validators {
  if (cached) return cached;
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    discriminator: true,
  });
  const event = checker(ajv.compile(loadSchema("event.schema.json")));
  const meta = checker(ajv.compile(loadSchema("meta.schema.json")));
  const agentMessage = checker(ajv.compile(loadSchema("agent-message.schema.json")));
  const inboxItem = checker(ajv.compile(loadSchema("inbox-item.schema.json")));
  const controlRequest = checker(ajv.compile(loadSchema("control-request.schema.json")));
  cached = {
    validateEvent: (obj) => [...event(obj), ...namingErrors(obj)],
    validateMeta: meta,
    validateAgentMessage: agentMessage,
    validateInboxItem: (obj, fileName) => [...inboxItem(obj), ...inboxNameErrors(obj, fileName)],
    validateControlRequest: (obj, fileName) => [...controlRequest(obj), ...controlNameErrors(fileName)],
  };
  return cached;
}
