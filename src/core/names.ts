import { MusterError } from "../base/errors.js";
import { shortId } from "../util/ids.js";
import type { RegistryDoc, RegistryEntry } from "./registry.js";

/**
 * A child's name (`spawn --name`): a short label a person types where an id goes. Letters, digits, `.`,
 * `_` and `-`, starting with a letter or digit (never an option, never a hidden path), at most 32.
 */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
// A name made only of hex digits and dashes would read as an id prefix: `muster status cafe` must mean one thing.
const ID_LIKE = /^[0-9a-fA-F-]+$/;

/** The rule in words, as the CLI's help and docs/cli.md give it. */
export const NAME_RULE =
  '`[A-Za-z0-9._-]`, starting with a letter or digit, up to 32, not only hex digits and "-" (such as `a1`, which reads as an id)';

export const isChildName = (s: string): boolean => NAME.test(s) && !ID_LIKE.test(s);

/** Validates a name given at spawn (before anything is created); returns it unchanged. */
export function assertChildName(name: string): string {
  if (!NAME.test(name))
    throw new MusterError(
      "invalid_argument",
      `invalid name ${JSON.stringify(name)}: use 1-32 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  if (ID_LIKE.test(name))
    throw new MusterError(
      "invalid_argument",
      `invalid name ${JSON.stringify(name)}: only hex digits and "-" would read as a child id; add another letter`,
    );
  return name;
}

/** The child of this primary with that name, if any. */
export function childNamed(doc: RegistryDoc, name: string): RegistryEntry | undefined {
  return Object.values(doc.children).find((c) => c.name === name);
}

/** Refuses a name another child of the primary already has (checked again under the registry lock). */
export function assertNameFree(doc: RegistryDoc, name: string): void {
  const other = childNamed(doc, name);
  if (other)
    throw new MusterError(
      "invalid_argument",
      `name "${name}" is taken by child ${other.id.slice(-8)} of this primary; choose another (or muster rm it)`,
    );
}

/**
 * The window name and pane title of a child's pane, the same at spawn and at every resume: its name when it
 * has one (the title then says which child), else `<agent>-<short id>` (the 8 hex digits shown everywhere).
 */
export function paneNaming(e: Pick<RegistryEntry, "id" | "agent" | "name">): {
  name: string;
  title?: string;
} {
  if (e.name === undefined) return { name: `${e.agent}-${shortId(e.id)}` };
  return { name: e.name, title: `${e.name} (${e.agent} ${shortId(e.id)})` };
}
