import { createRequire } from "node:module";
import type matterFn from "gray-matter";
import type { Caps } from "../artifacts/events.js";
import { parseRestart, RESTART_RULE, type RestartPolicy } from "../artifacts/restart.js";
import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import { POD_FIELDS, type PodRequest } from "../base/pod-request.js";
import { VERIFY_MAX_RETRIES, type VerifyRequest } from "../base/verify-request.js";
import { durationMs } from "../util/duration.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../util/timer-limit.js";

/** A profile name: what `--agent` accepts and what a file's resolved name must be. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

// No whitespace or control characters; covers `provider:model`, bare ids and `provider/model` runner spellings.
const MODEL_SPELLING = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;
const REASONING_SPELLING = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** True when `s` is a syntactically acceptable model spelling (no catalog check). */
export const isModelSpelling = (s: string): boolean => MODEL_SPELLING.test(s);

/** True when `s` is a syntactically acceptable reasoning level (no catalog check). */
export const isReasoningSpelling = (s: string): boolean => REASONING_SPELLING.test(s);

// gray-matter evaluates `---js` frontmatter with eval(); profiles come from any repository, so refuse it.
const refuse = (): never => {
  throw new Error("JavaScript frontmatter is not allowed");
};
// Loaded when a profile is first read (gray-matter and js-yaml are ~100 modules): ls, status and the like read none.
let matter: typeof matterFn | undefined;
const loadMatter = (): typeof matterFn => {
  matter ??= createRequire(import.meta.url)("gray-matter") as typeof matterFn;
  return matter;
};
// Passing options also bypasses gray-matter's content cache, which would hide a parse error on a second read.
const MATTER_OPTIONS = { engines: { javascript: refuse } };

/** Splits frontmatter from the body; throws MusterError("invalid_config") naming the file when the frontmatter is broken. */
export function readFrontmatter(file: string, text: string): { data: Record<string, unknown>; body: string } {
  let parsed: { data: unknown; content: string };
  try {
    parsed = loadMatter()(text, MATTER_OPTIONS);
  } catch (e) {
    const why = (e as Error).message.split("\n")[0];
    throw new MusterError("invalid_config", `agent profile ${file} has broken frontmatter (${why})`, {
      cause: e,
    });
  }
  const data = parsed.data;
  if (data === null || data === undefined) return { data: {}, body: parsed.content };
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new MusterError(
      "invalid_config",
      `agent profile ${file} has broken frontmatter (expected key: value pairs, got ${Array.isArray(data) ? "a list" : typeof data})`,
    );
  }
  return { data: data as Record<string, unknown>, body: parsed.content };
}

/** Reads typed fields from frontmatter; each bad value adds one warning naming the file and field. */
export class FieldReader {
  constructor(
    readonly file: string,
    readonly data: Record<string, unknown>,
    readonly warnings: string[],
  ) {}

  has(key: string): boolean {
    return this.data[key] !== undefined && this.data[key] !== null;
  }

  warn(key: string, expected: string): undefined {
    this.warnings.push(`${this.file}: field "${key}" ${expected}; ignored`);
    return undefined;
  }

  /** A non-empty string (trimmed). */
  str(key: string): string | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v === "string" && v.trim() !== "") return v.trim();
    return this.warn(key, "must be a non-empty string");
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(key: string, choices: readonly T[]): T | undefined {
    const v = this.str(key);
    if (v === undefined) return undefined;
    if ((choices as readonly string[]).includes(v)) return v as T;
    return this.warn(key, `must be one of ${choices.map((c) => `"${c}"`).join(", ")}, not "${v}"`);
  }

  /** A list of non-empty strings, or one comma-separated string ("Read, Grep, Bash"). */
  list(key: string): string[] | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v === "string") {
      const items = v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      if (items.length > 0) return items;
    } else if (Array.isArray(v) && v.every((w) => typeof w === "string" && w.trim() !== "")) {
      return v.map((w: string) => w.trim());
    }
    return this.warn(key, "must be a list of names or a comma-separated string");
  }

  /** A non-empty list of strings kept exactly (argv words). */
  argv(key: string): string[] | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (Array.isArray(v) && v.length > 0 && v.every((w) => typeof w === "string")) return v as string[];
    return this.warn(key, "must be a non-empty list of strings");
  }

  /** true or false. */
  bool(key: string): boolean | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v === "boolean") return v;
    return this.warn(key, "must be true or false");
  }

  /** A whole number ≥ 1. */
  positiveInt(key: string): number | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 1_000_000) return v;
    return this.warn(key, "must be a whole number from 1 to 1000000");
  }

  /** A restart policy: `on-lost`, `on-lost:N` or `no` (none: the same as leaving it out). */
  restart(key: string): RestartPolicy | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    const p = typeof v === "string" ? parseRestart(v) : undefined;
    if (p === undefined) return this.warn(key, `must be ${RESTART_RULE}`);
    return p ?? undefined;
  }

  /**
   * Caps: a map of maxTime and idleTimeout (a duration: seconds, or 30s, 5m, 1h) and maxTurns, maxToolCalls,
   * maxTokens, maxCost (positive numbers). A bad entry is dropped with a warning; the others stay.
   */
  caps(key: string): Caps | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v !== "object" || v === null || Array.isArray(v))
      return this.warn(key, "must be a map of caps");
    const out: Caps = {};
    for (const [k, val] of Object.entries(v)) {
      if (k === "maxTime" || k === "idleTimeout") {
        const ms = durationMs(val);
        if (ms === undefined) this.warn(`${key}.${k}`, "must be a duration (seconds, or 30s, 5m, 1h)");
        else if (ms > MAX_TIMER_MS) this.warn(`${key}.${k}`, `must be at most ${MAX_TIMER_TEXT}`);
        else out[`${k}Ms`] = ms;
      } else if (k === "maxTurns" || k === "maxToolCalls" || k === "maxTokens" || k === "maxCost") {
        if (typeof val === "number" && Number.isFinite(val) && val > 0) out[k] = val;
        else this.warn(`${key}.${k}`, "must be a positive number");
      } else
        this.warn(
          `${key}.${k}`,
          "is not a cap (maxTime, idleTimeout, maxTurns, maxToolCalls, maxTokens, maxCost)",
        );
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }

  /**
   * A container (`container: true`, an image's name, or a map of image, network, mount, mounts, cpus, memory,
   * env, config). Only the shape is read here: the values are checked at spawn (place/container/spec.ts),
   * where a bad one refuses the spawn instead of running a child with less isolation than asked for.
   */
  container(key: string): ContainerRequest | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (v === true) return {};
    if (typeof v === "string" && v.trim() !== "") return { image: v.trim() };
    if (typeof v !== "object" || v === null || Array.isArray(v))
      return this.warn(
        key,
        "must be true, an image's name or a map (image, network, mount, cpus, memory, env, config)",
      );
    const known = ["image", "network", "mount", "mounts", "cpus", "memory", "env", "config"];
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (known.includes(k)) out[k] = val;
      else this.warn(`${key}.${k}`, `is not a container field (${known.join(", ")})`);
    }
    return out as ContainerRequest;
  }

  /**
   * An acceptance check (`verify:`): a command line, an argv list, or a map of command, retries and timeout (a
   * duration). Checked whole at spawn (core/verify.ts).
   */
  verify(key: string): VerifyRequest | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v === "string" && v.trim() !== "") return { command: v };
    if (Array.isArray(v)) return this.argv(key) ? { command: v as string[] } : undefined;
    if (typeof v !== "object" || v === null)
      return this.warn(key, "must be a command line, an argv list, or a map (command, retries, timeout)");
    const out: VerifyRequest = {};
    for (const [k, val] of Object.entries(v)) {
      if (k === "command") {
        if ((typeof val === "string" && val.trim() !== "") || (Array.isArray(val) && val.length > 0))
          out.command = val as string | string[];
        else this.warn(`${key}.command`, "must be a command line or an argv list");
      } else if (k === "retries") {
        if (typeof val === "number" && Number.isInteger(val) && val >= 0 && val <= VERIFY_MAX_RETRIES)
          out.retries = val;
        else this.warn(`${key}.retries`, `must be a whole number from 0 to ${VERIFY_MAX_RETRIES}`);
      } else if (k === "timeout") {
        const ms = durationMs(val);
        if (ms === undefined || ms > MAX_TIMER_MS)
          this.warn(
            `${key}.timeout`,
            `must be a duration (seconds, or 30s, 5m, 1h), at most ${MAX_TIMER_TEXT}`,
          );
        else out.timeoutMs = ms;
      } else this.warn(`${key}.${k}`, "is not a verify field (command, retries, timeout)");
    }
    return out.command === undefined ? this.warn(key, "names no command to run") : out;
  }

  /** A Pod (`k8s:` a map of context, namespace, image, cpu, memory, serviceAccount, env, sandboxWarmPool); checked at spawn. */
  k8s(key: string): PodRequest | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v !== "object" || v === null || Array.isArray(v))
      return this.warn(key, `must be a map (${POD_FIELDS.join(", ")})`);
    const known: readonly string[] = POD_FIELDS;
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (known.includes(k)) out[k] = typeof val === "number" ? String(val) : val;
      else this.warn(`${key}.${k}`, `is not a Pod field (${known.join(", ")})`);
    }
    return out as PodRequest;
  }

  /** A model spelling (syntax only). */
  model(key: string): string | undefined {
    const v = this.str(key);
    if (v === undefined || isModelSpelling(v)) return v;
    return this.warn(
      key,
      `is not a model spelling ("${v}"; use provider:model); the primary's model is used`,
    );
  }

  /** A reasoning level (syntax only; levels are checked against the model's catalog at spawn). */
  reasoning(key: string): string | undefined {
    const v = this.str(key);
    if (v === undefined || isReasoningSpelling(v)) return v?.toLowerCase();
    return this.warn(key, `is not a reasoning level ("${v}")`);
  }

  /**
   * A map of environment variables. Numbers and booleans become strings (YAML reads `DEBUG: 1` as a number);
   * entries with a bad name or a nested value are dropped one by one with a warning.
   */
  env(key: string): Record<string, string> | undefined {
    if (!this.has(key)) return undefined;
    const v = this.data[key];
    if (typeof v !== "object" || v === null || Array.isArray(v))
      return this.warn(key, "must be a map of NAME: value");
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) this.warn(`${key}.${k}`, "is not a valid variable name");
      else if (typeof val === "string") out[k] = val;
      else if (typeof val === "number" || typeof val === "boolean") out[k] = String(val);
      else this.warn(`${key}.${k}`, "must be a string");
    }
    return out;
  }
}
