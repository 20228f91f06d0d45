import * as fs from "node:fs";
import * as path from "node:path";
import { isMusterError, MusterError } from "../../base/errors.js";
import { WORKFLOW_NAME } from "../dag/toml.js";

/** A code workflow as discovery sees it: found by name, run by importing its file. */
export interface CodeWorkflowFile {
  name: string;
  description: string;
  source: string;
}

/** File endings of code workflows. Node 20 cannot import TypeScript, so `.ts` is not one of them. */
export const CODE_EXTS = [".mjs", ".js"] as const;

const MAX_BYTES = 1024 * 1024;

/** `export const <key> = "…"` (or '…'), read from the text: listing a workflow never runs its code. */
function literal(text: string, key: string): string | undefined {
  const m = new RegExp(`^\\s*export\\s+const\\s+${key}\\s*=\\s*(["'])([^"'\\n\\\\]*)\\1`, "m").exec(text);
  return m?.[2];
}

/** A workflow file's text (a regular file of at most 1 MiB); any problem is a one-line "invalid_config". */
export function readWorkflowText(file: string): string {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new MusterError("invalid_config", `workflow ${file}: not a regular file`);
    if (st.size > MAX_BYTES) throw new MusterError("invalid_config", `workflow ${file}: larger than 1 MiB`);
    return fs.readFileSync(file, "utf8");
  } catch (e) {
    if (isMusterError(e)) throw e;
    throw new MusterError("invalid_config", `workflow ${file}: cannot read (${(e as Error).message})`);
  }
}

/**
 * Reads a code workflow's name and description without importing it: the name is an exported string
 * literal `name`, else the file stem; the description an exported `description`. Throws a one-line
 * MusterError "invalid_config" for a file that cannot be a workflow.
 */
export function readCodeWorkflowFile(file: string): CodeWorkflowFile {
  const text = readWorkflowText(file);
  const ext = CODE_EXTS.find((x) => file.endsWith(x)) ?? "";
  const name = literal(text, "name") ?? path.basename(file, ext);
  if (!WORKFLOW_NAME.test(name))
    throw new MusterError(
      "invalid_config",
      `workflow ${file}: name ${JSON.stringify(name)} must use letters, digits, ".", "_" or "-"`,
    );
  if (!/\bexport\s+default\b/.test(text))
    throw new MusterError("invalid_config", `workflow ${file}: no default export (the workflow function)`);
  return { name, description: literal(text, "description") ?? "", source: file };
}
