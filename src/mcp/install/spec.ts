import * as os from "node:os";
import * as path from "node:path";
import { forwardedNames } from "../../base/settings/resolve.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";

export const CLIENTS = ["claude", "codex", "gemini", "opencode"] as const;
export type Client = (typeof CLIENTS)[number];
export type Scope = "user" | "project";

/** The server entry every client gets: an absolute command (works without muster on PATH). */
export interface ServerSpec {
  command: string;
  args: string[];
  /** Variables the server (and so each child) needs, passed through by name, never by value. */
  envNames: string[];
  /** A run waits for its child: the client's per-call limit must be long. */
  timeoutSec: number;
}

/** A `muster mcp --http` server the client connects to, and the variable of its environment with the token. */
export interface HttpServer {
  /** Normalised (`URL.href`). */
  url: string;
  tokenEnv: string;
}

/** Where one install looks: the scope, and the environment and directory it resolves paths from. */
export interface InstallContext {
  scope: Scope;
  env: NodeJS.ProcessEnv;
  cwd: string;
  server: ServerSpec;
  /** The HTTP form (`--url`): the entry names this server instead of a command. */
  http?: HttpServer;
}

export const SERVER_NAME = "muster";
export const TIMEOUT_SEC = 3600;

/**
 * muster's own variables (state, backend, agent defaults, limits, the lineage of a parent that is itself a
 * child, binaries): the ones base/settings marks for MCP servers.
 */
const SETTING_VARS = forwardedNames("mcp");

/** Where children open (the caller's tmux session) and where the agent CLIs keep their config. */
const CONTEXT_VARS = [
  "TMUX",
  "TMUX_PANE",
  "XDG_CONFIG_HOME",
  "XDG_STATE_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "CODEX_HOME",
  "CLAUDE_CONFIG_DIR",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
];

/** What the agent CLIs a child runs read for their provider: keys and endpoints. */
export const KEY_VARS = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GEMINI_BASE_URL",
  "GOOGLE_CLOUD_PROJECT",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "OPENROUTER_API_KEY",
  "XAI_API_KEY",
  "GROQ_API_KEY",
  "MISTRAL_API_KEY",
  "DEEPSEEK_API_KEY",
];

export const DEFAULT_ENV_NAMES = [...SETTING_VARS, ...CONTEXT_VARS, ...KEY_VARS];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const isEnvName = (s: string): boolean => NAME.test(s);

/** The spec for this muster install; `extraEnv` adds names (`--env NAME`) after the defaults. */
export function serverSpec(extraEnv: string[] = []): ServerSpec {
  return {
    command: process.execPath,
    args: [path.join(PACKAGE_ROOT, "bin", "muster.js"), "mcp"],
    envNames: [...new Set([...DEFAULT_ENV_NAMES, ...extraEnv])],
    timeoutSec: TIMEOUT_SEC,
  };
}

/** The user's home as the client would see it (HOME first, so a test's HOME is honoured). */
export const homeOf = (env: NodeJS.ProcessEnv): string => env.HOME || os.homedir();
