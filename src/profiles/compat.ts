import { type FieldReader, isModelSpelling } from "./fields.js";
import type { Profile, ProfileFormat } from "./types.js";

/** The fields a compat file contributes beyond name, description and body. */
export type CompatFields = Pick<
  Profile,
  "runner" | "model" | "reasoning" | "tools" | "disallowedTools" | "maxTurns"
>;

/** The runner each foreign harness's profiles run with (the runner itself may not exist yet; core checks). */
export const COMPAT_RUNNER: Record<Exclude<ProfileFormat, "muster">, string> = {
  claude: "claude",
  pi: "pi",
  opencode: "opencode",
};

const PROVIDER = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const PI_THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;

// Bare ids whose provider is unambiguous from the name; anything else is not translated.
const FAMILIES: [RegExp, string][] = [
  [/^claude-/i, "anthropic"],
  [/^(gpt-|o[1-9]\b|o[1-9]-|codex-)/i, "openai"],
  [/^gemini-/i, "google"],
  [/^grok-/i, "xai"],
];

/** `provider/model` (first slash) or muster's own `provider:model`; undefined when neither. */
function providerModel(v: string): string | undefined {
  const slash = v.indexOf("/");
  const colon = v.indexOf(":");
  const cut = slash > 0 && (colon < 0 || slash < colon) ? slash : colon;
  if (cut <= 0) return undefined;
  const provider = v.slice(0, cut).toLowerCase();
  const id = v.slice(cut + 1);
  const out = `${provider}:${id}`;
  return PROVIDER.test(provider) && id !== "" && isModelSpelling(out) ? out : undefined;
}

function bareFamily(v: string): string | undefined {
  for (const [re, provider] of FAMILIES) if (re.test(v)) return `${provider}:${v}`;
  return undefined;
}

/** Claude Code: sonnet | opus | haiku | inherit | a full `claude-…` id. */
export function claudeModel(v: string): string | null | undefined {
  const lower = v.toLowerCase();
  if (lower === "inherit") return null;
  if (lower === "sonnet" || lower === "opus" || lower === "haiku") return `anthropic:${lower}`;
  if (/^claude-[a-z0-9][a-z0-9.-]*$/.test(lower)) return `anthropic:${lower}`;
  return lower.startsWith("anthropic:") ? providerModel(v) : undefined;
}

/** Pi: `provider/model`, a bare id, optionally with a `:<thinking>` suffix (returned separately). */
export function piModel(v: string): { model?: string | undefined; thinking?: string } {
  const suffix = /^(.+):(off|minimal|low|medium|high|xhigh)$/i.exec(v);
  // "anthropic:high" is a provider:model pair, not a thinking suffix; only strip it after a slash or a bare id.
  if (suffix && (suffix[1]!.includes("/") || !suffix[1]!.includes(":"))) {
    return { model: piModel(suffix[1]!).model, thinking: suffix[2]!.toLowerCase() };
  }
  return { model: providerModel(v) ?? bareFamily(v) };
}

/** OpenCode: `provider/model` (the id may itself contain slashes, e.g. openrouter/anthropic/claude-3.5). */
export const opencodeModel = (v: string): string | undefined => providerModel(v);

// muster's word for "no extended thinking" is "none" (the mock catalog and the primary's defaults use it).
const reasoningWord = (v: string): string => (v.toLowerCase() === "off" ? "none" : v.toLowerCase());

function mappedModel(r: FieldReader, harness: string, value: string | null | undefined, raw: string) {
  if (value === null) return undefined;
  if (value === undefined) {
    r.warnings.push(
      `${r.file}: field "model" "${raw}" has no known ${harness} translation; the primary's model is used`,
    );
  }
  return value;
}

/** Maps one foreign harness's frontmatter to muster's fields; bad values warn and are dropped. */
export function mapCompat(format: Exclude<ProfileFormat, "muster">, r: FieldReader): CompatFields {
  const out: CompatFields = { runner: COMPAT_RUNNER[format] };
  const rawModel = r.str("model");
  if (format === "claude") {
    if (rawModel) out.model = mappedModel(r, "Claude Code", claudeModel(rawModel), rawModel);
    out.tools = r.list("tools");
    out.disallowedTools = r.list("disallowedTools");
    out.maxTurns = r.positiveInt("maxTurns");
  } else if (format === "pi") {
    let suffixThinking: string | undefined;
    if (rawModel) {
      const m = piModel(rawModel);
      out.model = mappedModel(r, "Pi", m.model, rawModel);
      suffixThinking = m.thinking;
    }
    out.tools = r.list("tools");
    const thinking = r.oneOf("thinking", PI_THINKING) ?? suffixThinking;
    if (thinking) out.reasoning = reasoningWord(thinking);
  } else {
    if (rawModel) out.model = mappedModel(r, "OpenCode", opencodeModel(rawModel), rawModel);
    Object.assign(out, opencodeTools(r));
    const effort = r.reasoning("reasoningEffort") ?? r.reasoning("effort");
    if (effort) out.reasoning = reasoningWord(effort);
    out.maxTurns = r.positiveInt("maxSteps");
  }
  // Drop undefined keys so a compat profile has the same shape as a muster one.
  for (const k of Object.keys(out) as (keyof CompatFields)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** OpenCode `tools: {write: false, bash: true}` → allowed and disallowed lists (a plain list is accepted too). */
function opencodeTools(r: FieldReader): Pick<CompatFields, "tools" | "disallowedTools"> {
  if (!r.has("tools")) return {};
  const v = r.data.tools;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { tools: r.list("tools") };
  const on: string[] = [];
  const off: string[] = [];
  for (const [name, flag] of Object.entries(v)) {
    if (flag === true) on.push(name);
    else if (flag === false) off.push(name);
    else r.warn(`tools.${name}`, "must be true or false");
  }
  return {
    ...(on.length > 0 ? { tools: on } : {}),
    ...(off.length > 0 ? { disallowedTools: off } : {}),
  };
}
