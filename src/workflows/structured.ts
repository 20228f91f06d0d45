import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { MusterError } from "../base/errors.js";
import { extractJson } from "../util/json-answer.js";
import { STEP_SETTLED, type StepOutcome, type StepSpawn, type WorkflowHost } from "./host.js";

export { extractJson };

/** A step's `output`: its answer must be one JSON value matching `schema` (a JSON Schema). */
export interface OutputSpec {
  description?: string;
  schema: object;
}

/**
 * How a structured worker was asked for its format: "native" (the runner's CLI enforces the schema, e.g.
 * claude --json-schema, codex --output-schema) or "instructed" (the prompt demands it). ajv checks both.
 */
export type StructuredMode = "native" | "instructed";

/** A structured worker's settled outcome: `output` is the decoded value, never prose. */
export interface StructuredOutcome extends StepOutcome {
  structured?: StructuredMode;
  output?: unknown;
  /** Why the answer was refused after the corrective retry: one line per validation error. */
  errors?: string[];
}

/** A step's settled fields from its outcome (a structured step's decoded output or refusal included). */
export function outcomeFields(out: StructuredOutcome) {
  return {
    status: out.status,
    ...(out.reason ? { reason: out.reason } : {}),
    ...(out.text !== undefined ? { text: out.text } : {}),
    ...(out.structured ? { structured: out.structured } : {}),
    ...("output" in out ? { output: out.output } : {}),
    ...(out.errors ? { errors: out.errors } : {}),
  };
}

/**
 * Compiles the spec's schema, refusing a bad spec (not an object, or a schema ajv rejects) with a one-line
 * invalid_config error, so a workflow with one fails before any child starts.
 */
export function compileOutput(spec: unknown, where: string): ValidateFunction {
  const s = spec as OutputSpec | null;
  if (typeof s !== "object" || s === null || Array.isArray(s))
    throw new MusterError("invalid_config", `${where}: "output" must be a table {description, schema}`);
  if (s.description !== undefined && typeof s.description !== "string")
    throw new MusterError("invalid_config", `${where}: output "description" must be a string`);
  if (typeof s.schema !== "object" || s.schema === null || Array.isArray(s.schema))
    throw new MusterError("invalid_config", `${where}: output "schema" must be a JSON Schema object`);
  try {
    return new Ajv({ allErrors: true, strict: false }).compile(s.schema);
  } catch (e) {
    throw new MusterError(
      "invalid_config",
      `${where}: output schema is not valid: ${(e as Error).message.split("\n")[0]}`,
    );
  }
}

/**
 * A structured worker's spawn: the schema travels with the turn when the agent's runner enforces it natively
 * (the prompt then only names what the value is), else the prompt demands the format (structuredPrompt).
 */
export function structuredSpawn(host: WorkflowHost, s: StepSpawn, spec: OutputSpec): StepSpawn {
  if (host.nativeOutput?.(s.agent, spec.schema)) {
    const what = spec.description ? `\n\nYour final answer is structured output: ${spec.description}` : "";
    return { ...s, prompt: `${s.prompt}${what}`, outputSchema: spec.schema };
  }
  return { ...s, prompt: structuredPrompt(s.prompt, spec) };
}

/** Which way a spawn from structuredSpawn asks for the format. */
export const modeOf = (s: StepSpawn): StructuredMode => (s.outputSchema ? "native" : "instructed");

/** The prompt with the format instruction appended (the generic path: no runner-native structured output). */
export function structuredPrompt(prompt: string, spec: OutputSpec): string {
  return [
    prompt,
    "",
    "Answer with one JSON value only, in a ```json fenced block, matching this JSON Schema:",
    ...(spec.description ? [`(${spec.description})`] : []),
    "```json",
    JSON.stringify(spec.schema, null, 2),
    "```",
  ].join("\n");
}

/** The corrective second turn: the validation errors, and the same demand again. */
export function correctionPrompt(errors: string[], spec: OutputSpec): string {
  return [
    "Your answer did not match the required JSON Schema:",
    ...errors.map((e) => `- ${e}`),
    "",
    "Answer again with one JSON value only, in a ```json fenced block, matching this JSON Schema:",
    "```json",
    JSON.stringify(spec.schema, null, 2),
    "```",
  ].join("\n");
}

/** One line per ajv error: where in the value, and what is wrong. */
export function errorLines(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const at = e.instancePath === "" ? "the value" : e.instancePath;
    const extra = e.keyword === "additionalProperties" ? ` (${String(e.params.additionalProperty)})` : "";
    return `${at} ${e.message ?? e.keyword}${extra}`;
  });
}

/** Decodes and validates one answer. */
export function checkAnswer(
  validate: ValidateFunction,
  text: string,
): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  const got = extractJson(text);
  if (!got.ok) return { ok: false, errors: [got.error] };
  if (validate(got.value)) return { ok: true, value: got.value };
  return { ok: false, errors: errorLines(validate.errors) };
}

/**
 * Finishes a structured worker whose first turn is already started: waits, validates, allows one corrective
 * turn with the validation errors, then closes the child (one-shot: it is not resumed). Never throws; a
 * failed child or an answer still invalid after the retry is an `errored` outcome with its errors.
 */
export async function finishStructured(
  host: WorkflowHost,
  child: { id: string; turnId: string },
  spec: OutputSpec,
  validate: ValidateFunction,
  onRetry?: (turnId: string) => void,
  mode: StructuredMode = "instructed",
): Promise<StructuredOutcome> {
  // The corrective retry is a plain turn (the schema in its prompt) whichever way the first one went.
  const done = (o: StructuredOutcome): StructuredOutcome => ({ ...o, structured: mode });
  try {
    let out = await host.wait(child.id, child.turnId);
    if (out.status !== "completed") return done(out);
    let check = checkAnswer(validate, out.text ?? "");
    if (check.ok) return done({ ...out, output: check.value });
    let retry: { turnId: string };
    try {
      retry = await host.send(child.id, correctionPrompt(check.errors, spec));
    } catch (e) {
      return done({
        status: "errored",
        reason: `could not retry: ${(e as Error).message}`,
        errors: check.errors,
      });
    }
    onRetry?.(retry.turnId);
    out = await host.wait(child.id, retry.turnId);
    if (out.status !== "completed") return done({ ...out, errors: check.errors });
    check = checkAnswer(validate, out.text ?? "");
    if (check.ok) return done({ ...out, output: check.value });
    return done({
      status: "errored",
      reason: "the answer did not match the output schema, also after one corrective retry",
      ...(out.text !== undefined ? { text: out.text } : {}),
      errors: check.errors,
    });
  } finally {
    await host.cancel([child.id], STEP_SETTLED).catch(() => {});
  }
}
