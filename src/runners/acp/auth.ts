/**
 * ACP `authenticate`: an agent that refuses a session until the client has authenticated (codex-acp with an
 * API key) gets the method it offers (initialize's `authMethods`) whose environment variable the child has;
 * with none, the error names the variables it would take.
 */
import { obj, str } from "../common/shared.js";
import { RpcError } from "./rpc.js";

interface AuthMethod {
  id: string;
  name?: string;
  /** Environment variables it reads: its `vars` (type env_var), else names its name or description quotes. */
  vars: string[];
}

const ENV_NAME = /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g;

export function authMethods(init: unknown): AuthMethod[] {
  const list = obj(init).authMethods;
  return (Array.isArray(list) ? list.map(obj) : [])
    .filter((m) => str(m.id) !== undefined)
    .map((m) => {
      const declared = (Array.isArray(m.vars) ? m.vars.map(obj) : [])
        .map((v) => str(v.name))
        .filter((v): v is string => v !== undefined);
      const named = `${str(m.name) ?? ""} ${str(m.description) ?? ""}`.match(ENV_NAME) ?? [];
      return {
        id: m.id as string,
        ...(str(m.name) ? { name: m.name as string } : {}),
        vars: declared.length > 0 ? declared : [...new Set(named)],
      };
    });
}

/** The ACP error an agent answers before authentication (-32000 auth_required), or one that says so. */
export const needsAuth = (e: unknown): boolean =>
  e instanceof RpcError && (e.code === -32000 || /auth/i.test(e.message));

/** The method to run for this environment: the first whose variables are all set. */
export function methodFor(methods: AuthMethod[], env: Record<string, string>): AuthMethod | undefined {
  return methods.find((m) => m.vars.length > 0 && m.vars.every((v) => env[v]?.trim()));
}

/** One line on what the agent wants when no method fits the child's environment. */
export function authHint(methods: AuthMethod[], message: string): string {
  const vars = [...new Set(methods.flatMap((m) => m.vars))];
  const others = methods.filter((m) => m.vars.length === 0).map((m) => m.name ?? m.id);
  const how = vars.length
    ? `set ${vars.join(" or ")} in the child's environment (the profile's env)`
    : "authenticate it outside muster first";
  const rest = others.length ? `; its other methods: ${others.join(", ")}` : "";
  return `the agent needs authentication (${message}): ${how}${rest}`;
}
