/**
 * What a provider's error means for a tree of children: a rate limit (with when it lifts, if said), an exhausted
 * quota or a refused credential (both terminal: retrying spends nothing but time), or an overloaded upstream.
 * Each runner reads its CLI's own structured error (an HTTP status, a provider error type, a reset header) into
 * `ProviderSignal`s; `classifyProvider` is the one place that maps them to a kind.
 */
import type { ProviderError, ProviderErrorKind } from "../../artifacts/events.js";

export type { ProviderError, ProviderErrorKind } from "../../artifacts/events.js";

/** What a CLI said about a failed provider request, as structured as its output allows. */
export interface ProviderSignal {
  /** The HTTP status of the provider's answer. */
  status?: number;
  /** Provider error types and codes (`rate_limit_error`, `insufficient_quota`, `RESOURCE_EXHAUSTED`, …). */
  codes?: (string | undefined)[];
  /** Response headers, lower-case names (retry-after, x-ratelimit-reset-*, anthropic-ratelimit-*-reset). */
  headers?: Record<string, string>;
  /** Seconds until the limit lifts, when the CLI said so itself. */
  retryAfterSeconds?: number;
  /** An absolute reset time the CLI gave (ISO string or epoch seconds). */
  resetAt?: string | number;
  message: string;
}

const AUTH = new Set([
  "authentication_error",
  "authentication_failed",
  "invalid_api_key",
  "api_key_invalid",
  "unauthorized",
  "unauthenticated",
  "permission_denied",
]);
const QUOTA = new Set([
  "insufficient_quota",
  "billing_error",
  "usagelimitexceeded",
  "usage_limit_reached",
  "usage_limit_exceeded",
  "quota_exceeded",
]);
const RATE = new Set(["rate_limit_error", "rate_limit_exceeded", "rate_limit", "ratelimitexceeded"]);
const OVERLOADED = new Set([
  "overloaded",
  "overloaded_error",
  "server_is_overloaded",
  "serveroverloaded",
  "unavailable",
  "server_overloaded",
]);

/** The kind of a provider error, or undefined when it is none of the four (a 500, a bad request). */
export function providerKind(s: ProviderSignal): ProviderErrorKind | undefined {
  const codes = (s.codes ?? []).filter((c): c is string => !!c).map((c) => c.toLowerCase());
  const has = (set: Set<string>) => codes.some((c) => set.has(c));
  if (has(AUTH) || s.status === 401) return "auth";
  if (has(QUOTA) || s.status === 402) return "quota";
  if (has(RATE)) return "rate_limit";
  if (has(OVERLOADED) || s.status === 529 || s.status === 503) return "overloaded";
  // Gemini's RESOURCE_EXHAUSTED and a bare 429 are a rate limit unless the provider said quota (above).
  if (s.status === 429 || codes.includes("resource_exhausted")) return "rate_limit";
  return undefined;
}

/** The classification, with a reset time when the signal carries one; undefined for other errors. */
export function classifyProvider(s: ProviderSignal, now = Date.now()): ProviderError | undefined {
  const kind = providerKind(s);
  if (!kind) return undefined;
  const resetAt = resetOf(s, now);
  return { kind, ...(resetAt ? { resetAt } : {}), message: s.message.slice(0, 2000) };
}

/** When the limit lifts: the CLI's own figure, else the provider's headers. */
function resetOf(s: ProviderSignal, now: number): string | undefined {
  if (s.resetAt !== undefined) return isoOf(s.resetAt);
  if (s.retryAfterSeconds !== undefined && s.retryAfterSeconds > 0)
    return new Date(now + s.retryAfterSeconds * 1000).toISOString();
  const h = s.headers ?? {};
  const retryAfter = h["retry-after"];
  if (retryAfter) {
    const secs = Number(retryAfter);
    if (Number.isFinite(secs) && secs > 0) return new Date(now + secs * 1000).toISOString();
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return new Date(date).toISOString();
  }
  for (const name of [
    "anthropic-ratelimit-unified-reset",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
  ]) {
    if (h[name]) {
      const at = isoOf(/^\d+$/.test(h[name]) ? Number(h[name]) : h[name]);
      if (at) return at;
    }
  }
  for (const name of ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]) {
    const secs = h[name] ? durationSeconds(h[name]) : undefined;
    if (secs !== undefined && secs > 0) return new Date(now + secs * 1000).toISOString();
  }
  const ms = Number(h["retry-after-ms"]);
  if (Number.isFinite(ms) && ms > 0) return new Date(now + ms).toISOString();
  return undefined;
}

/** An ISO time from an ISO string or epoch seconds; undefined when it is neither. */
function isoOf(v: string | number): string | undefined {
  const ms = typeof v === "number" ? v * 1000 : Date.parse(v);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** OpenAI's reset durations (`20s`, `1m30s`, `250ms`, `6m0.5s`) in seconds. */
export function durationSeconds(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0) return undefined;
  const unit = { h: 3600, m: 60, s: 1, ms: 0.001 } as const;
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

/** Lower-case header names (some CLIs echo them as the server sent them). */
export function lowerHeaders(h: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof h !== "object" || h === null) return out;
  for (const [k, v] of Object.entries(h)) if (typeof v === "string") out[k.toLowerCase()] = v;
  return out;
}

/** A provider's JSON error body (`{error: {type, code, status, message}}` or `{type, message}`), read for codes. */
export function bodyCodes(body: unknown): { codes: string[]; message?: string } {
  let o: unknown = body;
  if (typeof body === "string") {
    try {
      o = JSON.parse(body);
    } catch {
      return { codes: [] };
    }
  }
  const rec = (v: unknown): Record<string, unknown> =>
    typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
  const err = rec(rec(o).error);
  const codes = [err.type, err.code, err.status]
    .map((c) => (typeof c === "string" ? c : undefined))
    .filter((c): c is string => !!c);
  // Gemini: a daily quota is terminal; a per-minute one is a rate limit (google.rpc.QuotaFailure).
  for (const d of Array.isArray(err.details) ? err.details.map(rec) : []) {
    if (typeof d.reason === "string") codes.push(d.reason);
    for (const v of Array.isArray(d.violations) ? d.violations.map(rec) : [])
      if (typeof v.quotaId === "string" && /PerDay/i.test(v.quotaId)) codes.push("quota_exceeded");
  }
  return { codes, ...(typeof err.message === "string" ? { message: err.message } : {}) };
}

/**
 * For CLIs that print only their own words for an error (codex exec, Gemini CLI's stream-json, Pi, OpenCode's
 * ACP errors): the HTTP status they prefix it with and the fixed phrases the CLI or the provider uses.
 * Used only where the CLI's output carries no structured error.
 */
export function classifyText(message: string, status?: number, now = Date.now()): ProviderError | undefined {
  const m = message;
  const lead = /^(?:\[API Error: )?(\d{3})\b/.exec(m);
  const code =
    status ?? (lead ? Number(lead[1]) : /\b(\d{3}) (?:Too Many Requests|Unauthorized)\b/.exec(m)?.[1]);
  const codes: string[] = [];
  if (
    /exceeded your current quota|quota exceeded|insufficient_quota|exhausted your daily quota|credit balance is too low|usage limit/i.test(
      m,
    )
  )
    codes.push("insufficient_quota");
  if (/incorrect api key|invalid api key|api key not valid|invalid x-api-key|unauthorized/i.test(m))
    codes.push("invalid_api_key");
  if (/overloaded|at capacity/i.test(m)) codes.push("overloaded_error");
  if (/rate limit/i.test(m)) codes.push("rate_limit_exceeded");
  // "retry in 20s" / "Suggested retry after 20s" / "try again in 1m30s": the limit lifts, so it is not a quota.
  const retry =
    /(?:retry after|retry in|try again in)\s+(\d+(?:\.\d+)?(?:ms|h|m|s)(?:\d+(?:\.\d+)?(?:ms|h|m|s))*)/i.exec(
      m,
    );
  const retryAfterSeconds = retry ? durationSeconds(retry[1]!) : undefined;
  const quota = codes.indexOf("insufficient_quota");
  if (retryAfterSeconds !== undefined && quota >= 0 && !/daily/i.test(m)) {
    codes.splice(quota, 1);
    codes.push("rate_limit_exceeded");
  }
  return classifyProvider(
    {
      ...(code !== undefined ? { status: Number(code) } : {}),
      codes,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      message: m,
    },
    now,
  );
}
