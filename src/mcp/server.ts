import { readFileSync } from "node:fs";
import * as path from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { isMusterError } from "../base/errors.js";
import { createMuster, type Muster } from "../core/muster.js";
import { loadBackendModules } from "../mux/builtin.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import type { CallContext } from "./handlers.js";
import { mcpErrorText } from "./next-step.js";
import { CallProgress } from "./progress.js";
import { getPrompt, listPrompts, PromptError } from "./prompts.js";
import { agentsLine } from "./shape.js";
import { listedTool, type Tool, toolTable } from "./tools.js";
import { WorkflowRuns } from "./workflow.js";

/** Writes one line to stderr (stdout is the protocol). */
export type Log = (line: string) => void;

export const stderrLog: Log = (line) => {
  process.stderr.write(`muster mcp: ${line}\n`);
};

/**
 * One line for an argument that does not fit the tool's schema. It answers that very call, so it does not
 * name the tool (each client spells tool names its own way).
 */
function schemaMessage(e: ErrorObject | undefined): string {
  if (!e) return "invalid arguments";
  const field = e.instancePath.slice(1).replaceAll("/", ".");
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "required") return `missing argument "${String(p.missingProperty)}"`;
  if (e.keyword === "additionalProperties") return `unknown argument "${String(p.additionalProperty)}"`;
  if (e.keyword === "minLength") return `${field} is empty`;
  if (e.keyword === "enum") return `${field} must be one of ${(p.allowedValues as string[]).join(", ")}`;
  return `${field || "arguments"} ${e.message ?? "is invalid"}`;
}

/**
 * A JSON-RPC error for the SDK to send. Not an McpError: its message already starts "MCP error <code>:",
 * which the client's McpError would then say a second time.
 */
const rpcError = (code: ErrorCode, message: string): Error => Object.assign(new Error(message), { code });

const failure = (message: string): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: message.replace(/\s*\n\s*/g, " ").trim() }],
});

/** The server's version: muster's package version. */
function version(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string })
      .version;
  } catch {
    return "0.0.0";
  }
}

/**
 * An MCP server over one Muster: tools/list and tools/call from the tool table, prompts/list and prompts/get
 * for the workflows; `idle()` awaits calls in flight and the workflow runs started here.
 */
export function createMcpServer(m: Muster, log: Log = stderrLog): { server: Server; idle(): Promise<void> } {
  const tools = (): Tool[] => toolTable(agentsLine({ profiles: m.agents().agents.map((a) => a.profile) }));
  const ajv = new Ajv({ allErrors: false });
  const validators = new Map<string, ValidateFunction>();
  const byName = new Map<string, Tool>();
  for (const t of toolTable("")) {
    validators.set(t.name, ajv.compile(t.inputSchema));
    byName.set(t.name, t);
  }
  const inFlight = new Set<Promise<unknown>>();
  const runs = new WorkflowRuns();
  let closed = false;

  // The SDK's low-level Server: muster's tool table carries plain JSON Schemas, which McpServer cannot take.
  const server = new Server(
    { name: "muster", version: version() },
    {
      capabilities: { tools: {}, prompts: {} },
    },
  );
  server.onclose = () => {
    closed = true;
  };
  server.onerror = (e) => log(`protocol error: ${e.message}`);

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools().map(listedTool),
  }));

  // Workflows as prompts: a client that offers prompts as slash commands offers `workflow:<name>`.
  server.setRequestHandler(ListPromptsRequestSchema, () => listPrompts(m));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    try {
      return await getPrompt(m, req.params.name, req.params.arguments);
    } catch (e) {
      if (e instanceof PromptError) throw rpcError(ErrorCode.InvalidParams, e.message);
      throw e;
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const { name } = req.params;
    const tool = byName.get(name);
    const validate = validators.get(name);
    if (!tool || !validate) throw rpcError(ErrorCode.InvalidParams, `unknown tool ${name}`);
    const args = req.params.arguments ?? {};
    if (!validate(args)) return failure(`invalid_argument: ${schemaMessage(validate.errors?.[0])}`);
    const signal = extra.signal;
    const progress = new CallProgress(extra._meta?.progressToken, (params) =>
      extra.sendNotification({ method: "notifications/progress", params }),
    );
    const ctx: CallContext = {
      m,
      signal,
      progress,
      runs,
      // The SDK aborts the same signal for a client's cancel and for a closed connection; onclose (which
      // runs right after the aborts) tells them apart, so decide a microtask later.
      abortReason: () =>
        new Promise((resolve) => {
          const decide = (): void => queueMicrotask(() => resolve(closed ? "closed" : "cancelled"));
          if (signal.aborted) decide();
          else signal.addEventListener("abort", decide, { once: true });
        }),
    };
    const call = (async () => tool.handler(args, ctx))();
    inFlight.add(call);
    try {
      const out = await call;
      return { content: [{ type: "text", text: JSON.stringify(out) }] };
    } catch (e) {
      if (!isMusterError(e)) log(`${name} failed: ${(e as Error)?.stack ?? String(e)}`);
      return failure(mcpErrorText(e));
    } finally {
      await progress.stop();
      inFlight.delete(call);
    }
  });

  return {
    server,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // Workflow runs started with await false finish (and record their end) before the server exits.
      await runs.idle();
    },
  };
}

/** `muster mcp`: serves the tools on stdin/stdout until stdin ends; logs go to stderr only. */
export async function serveStdio(opts: { primary?: string } = {}, log: Log = stderrLog): Promise<void> {
  // Nothing but the protocol may reach stdout.
  console.log = console.info = console.debug = (...a: unknown[]) => console.error(...a);
  await loadBackendModules(process.env);
  const m = createMuster(opts.primary ? { primary: opts.primary } : {});
  const { server, idle } = createMcpServer(m, log);
  const closed = new Promise<void>((resolve) => {
    const prev = server.onclose;
    server.onclose = () => {
      prev?.();
      resolve();
    };
  });
  const onRejection = (e: unknown): void => log(`unhandled rejection: ${(e as Error)?.stack ?? String(e)}`);
  process.on("unhandledRejection", onRejection);
  await server.connect(new StdioServerTransport());
  log(`serving primary ${m.primary} for ${m.cwd}`);
  process.stdin.once("end", () => void server.close());
  await closed;
  await idle();
  process.removeListener("unhandledRejection", onRejection);
}
