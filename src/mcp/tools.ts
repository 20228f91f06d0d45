import { CAP_NAMES } from "../core/caps.js";
import { MAX_LIMIT, type ModelQuery } from "../core/catalog.js";
import { DEFAULT_AGENT, DEFAULT_WAIT_MODE } from "../core/defaults.js";
import type { SendMode } from "../core/send.js";
import { compare as compareBestOf } from "./best-of.js";
import * as h from "./handlers.js";
import { type WorkflowArgs, workflow } from "./workflow.js";

/** A JSON Schema object (the subset the tool inputs use). */
export type JsonSchema = Record<string, unknown>;

/** One MCP tool: its name, one-line description, input schema, and the handler that calls the core. */
export interface Tool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  handler: (args: Record<string, unknown>, ctx: h.CallContext) => unknown;
}

const str = (description: string, minLength = 1): JsonSchema => ({ type: "string", minLength, description });

/**
 * A tool as tools/list shows it: its schema without the checks the server makes anyway on every call (strings
 * that may not be empty, no unknown arguments; each refused with a one-line error). The list goes into the
 * client model's context on every request, so it carries only what helps the model call the tool.
 */
export function listedTool(t: Pick<Tool, "name" | "description" | "inputSchema">) {
  return { name: t.name, description: t.description, inputSchema: lighten(t.inputSchema) };
}

function lighten(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lighten);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if ((k === "minLength" && v === 1) || (k === "additionalProperties" && v === false)) continue;
    out[k] = lighten(v);
  }
  return out;
}
/** A plain string (its name says what it is; the workflow check refuses a bad one). */
const S: JsonSchema = { type: "string" };
const ID = str("Child id (or last 8 hex).");
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
});

/** The tool table; `agentsDescription` lists the profiles (it changes as profiles do). */
export function toolTable(agentsDescription: string): Tool[] {
  return [
    {
      name: "subagents_run",
      description:
        "Start a subagent (agent) or continue a settled one (id); returns its result (await false: its id at once).",
      inputSchema: object(
        {
          agent: str(
            `${agentsDescription}\nDefault (no agent, no id): $MUSTER_AGENT, else ${DEFAULT_AGENT}.`,
          ),
          id: str("Or: resume this settled child."),
          prompt: str("The task."),
          model: str("Model (see subagents_models)."),
          reasoning: S,
          await: { type: "boolean", description: "Wait for the result (default)." },
          groupId: str("Deliver with this group (await {groupId} seals it)."),
          isolation: { enum: ["worktree"] },
          caps: { type: "object", description: `Caps: ${CAP_NAMES.join(" ")}` },
          name: S,
          backend: S,
          place: S,
          on: S,
          // Either a string or an object: typed by the handler, which refuses anything else in one line.
          container: { description: "Image, or {image,network,cpus,memory}" },
          tui: { type: "boolean" },
          fork: str("Start from this child's conversation."),
          verify: { description: "Check per answer: sh -c line or {command,retries,timeoutMs}" },
          restart: str("on-lost[:N]: rerun a turn whose host/agent died."),
          // Its bounds (2 to 8) are the core's to check, in one line that says them.
          bestOf: { type: "integer", description: "Best-of: N candidates, in worktrees" },
          agents: { type: "array", items: S, description: "Best-of: their agents, in turn" },
        },
        ["prompt"],
      ),
      handler: (a, c) => h.run(a as unknown as h.RunArgs, c),
    },
    {
      name: "subagents_await",
      description: "Wait for children's current turns: all, or the first (the rest pending).",
      inputSchema: object({
        ids: { type: "array", items: S, minItems: 1 },
        groupId: str("Or: seal this group and await all of it."),
        mode: { type: "string", enum: ["first", "all"], description: `Default ${DEFAULT_WAIT_MODE}.` },
        timeoutMs: { type: "integer", minimum: 0, description: "Give up after this long." },
      }),
      handler: (a, c) => h.awaitChildren(a as unknown as Parameters<typeof h.awaitChildren>[0], c),
    },
    {
      name: "subagents_status",
      description: "One child in detail (turns, usage, attach command); no id: this workspace's children.",
      inputSchema: object({
        id: ID,
        resumeTree: { type: "boolean", description: "Lift the tree's pause first." },
      }),
      handler: (a, c) => h.status(a, c),
    },
    {
      name: "subagents_result",
      description: "A settled turn's output (default: the latest).",
      inputSchema: object({ id: ID, turnId: str("A specific turn.") }, ["id"]),
      handler: (a, c) => h.result(a as { id: string }, c),
    },
    {
      name: "subagents_send",
      description:
        "A child's next turn. mode: queue (after the current), now (interrupt, then this), stop (interrupt only).",
      inputSchema: object(
        {
          id: ID,
          prompt: str("The follow-up."),
          mode: { type: "string", enum: ["queue", "now", "stop"] },
        },
        ["id"],
      ),
      handler: (a, c) => h.send(a as { id: string; prompt?: string; mode?: SendMode }, c),
    },
    {
      name: "subagents_cancel",
      description: "Cancel children's running turns and close them (id or ids).",
      inputSchema: object({
        id: ID,
        ids: { type: "array", items: S, minItems: 1 },
        snapshot: { type: "boolean", description: "First keep each one's last context for a resume." },
      }),
      handler: (a, c) => h.cancel(a, c),
    },
    {
      name: "subagents_inbox",
      description: "Undelivered completions (marked delivered unless peek) and children's questions.",
      inputSchema: object({ peek: { type: "boolean", description: "Show without marking delivered." } }),
      handler: (a, c) => h.inbox(a as { peek?: boolean }, c),
    },
    {
      name: "subagents_answer",
      description: "Answer an inbox request: a question's text, or allow, allow_always or deny.",
      inputSchema: object({ id: S, text: S }, ["id", "text"]),
      handler: (a, c) => h.answer(a as { id: string; text: string }, c),
    },
    {
      name: "subagents_models",
      description: "One bounded question to the model catalog; {}: defaults and counts per runner.",
      inputSchema: object({
        provider: str("Only this provider."),
        query: str("Model ids containing this text."),
        limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT },
        model: str("A model's runner and reasoning levels."),
        agent: str("A profile's effective model and reasoning."),
      }),
      handler: (a, c) => h.models(a as ModelQuery, c),
    },
    {
      name: "subagents_workflow",
      description:
        "Run a workflow (subagent steps) by name, steps or program (source), or await one (runId); {}: list them.",
      inputSchema: object({
        name: str("A discovered workflow."),
        steps: {
          type: "array",
          minItems: 1,
          maxItems: 256,
          description: "Or: TOML [[steps]] tables.",
          items: object(
            { id: S, agent: S, prompt: S, needs: { type: "array", items: S }, model: S, reasoning: S },
            ["id", "agent", "prompt"],
          ),
        },
        source: str(
          "Or: sandboxed JS body of async (ctx,input)=>{}: ctx.agent({agent,prompt}).await(), ctx.await(hs,'all'|'first'), ctx.parallel, ctx.log.",
        ),
        input: { type: "string", description: "Every step gets it." },
        await: { type: "boolean", description: "false: the runId at once." },
        keep: { type: "boolean", description: "true: leave step children open." },
        runId: str("A run's id."),
      }),
      handler: (a, c) => workflow(a as WorkflowArgs, c),
    },
    {
      name: "subagents_compare",
      description: "Best-of candidates side by side; judge: an agent picks one.",
      inputSchema: object({ group: S, judge: S }, ["group"]),
      handler: (a, c) => compareBestOf(a as { group: string; judge?: string }, c),
    },
    {
      name: "subagents_agents",
      description: "The agent profiles: name, runner, one-line description.",
      inputSchema: object({}),
      handler: (a, c) => h.agents(a as Record<string, never>, c),
    },
  ];
}
