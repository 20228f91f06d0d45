import { MAX_LIMIT, type ModelQuery } from "../core/catalog.js";
import { DEFAULT_AGENT, DEFAULT_WAIT_MODE } from "../core/defaults.js";
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
/** A plain string (its name says what it is; the workflow check refuses a bad one). */
const S: JsonSchema = { type: "string" };
const ID = str("Child id (full, or its last 8 hex digits).");
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
        "Start a subagent (agent) or continue a settled one (id) with a prompt; returns its result (or, with await false, its id at once).",
      inputSchema: object(
        {
          agent: str(
            `${agentsDescription}\nDefault (no agent, no id): $MUSTER_AGENT, else ${DEFAULT_AGENT}.`,
          ),
          id: str("Continue this settled child instead (resume)."),
          prompt: str("The task."),
          model: str("Model (subagents_models lists them); default: profile's, or the last turn's."),
          reasoning: str("Reasoning level for the model."),
          await: { type: "boolean", description: "Wait for the result (default true)." },
          groupId: str("New children only: deliver with this group (subagents_await {groupId} seals it)."),
          isolation: { enum: ["worktree"] },
        },
        ["prompt"],
      ),
      handler: (a, c) => h.run(a as unknown as h.RunArgs, c),
    },
    {
      name: "subagents_await",
      description:
        "Wait for children's current turns: all, or the first to settle (the rest listed as pending).",
      inputSchema: object({
        ids: { type: "array", items: ID, minItems: 1 },
        groupId: str("Or: seal this group and await all of it."),
        mode: { type: "string", enum: ["first", "all"], description: `Default ${DEFAULT_WAIT_MODE}.` },
        timeoutMs: { type: "integer", minimum: 0, description: "Give up after this long." },
      }),
      handler: (a, c) => h.awaitChildren(a as unknown as Parameters<typeof h.awaitChildren>[0], c),
    },
    {
      name: "subagents_status",
      description:
        "One child in detail (turns, usage, attach command), or without id this workspace's children.",
      inputSchema: object({ id: ID }),
      handler: (a, c) => h.status(a, c),
    },
    {
      name: "subagents_result",
      description: "A settled turn's output (default: the latest turn).",
      inputSchema: object({ id: ID, turnId: str("A specific turn.") }, ["id"]),
      handler: (a, c) => h.result(a as { id: string }, c),
    },
    {
      name: "subagents_send",
      description: "Queue the next turn of a running child (it starts when the current one ends).",
      inputSchema: object({ id: ID, prompt: str("The follow-up.") }, ["id", "prompt"]),
      handler: (a, c) => h.send(a as { id: string; prompt: string }, c),
    },
    {
      name: "subagents_cancel",
      description: "Cancel children's running turns and close them (id or ids).",
      inputSchema: object({ id: ID, ids: { type: "array", items: ID, minItems: 1 } }),
      handler: (a, c) => h.cancel(a, c),
    },
    {
      name: "subagents_inbox",
      description:
        "Completions not yet delivered to you (by result, await or an earlier inbox); marks them delivered unless peek.",
      inputSchema: object({ peek: { type: "boolean", description: "Show without marking delivered." } }),
      handler: (a, c) => h.inbox(a as { peek?: boolean }, c),
    },
    {
      name: "subagents_models",
      description:
        "Ask the model catalog one bounded question; no arguments: the defaults and counts per runner.",
      inputSchema: object({
        provider: str("Search only this provider."),
        query: str("Search model ids containing this text."),
        limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT },
        model: str("One model: its runner and reasoning levels."),
        agent: str("One profile: its effective model and reasoning."),
      }),
      handler: (a, c) => h.models(a as ModelQuery, c),
    },
    {
      name: "subagents_workflow",
      description:
        "Run a workflow (a DAG of subagent steps) by name or as a steps list, or await a run (runId); {}: list them.",
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
        input: { type: "string", description: "Every step gets it." },
        await: { type: "boolean", description: "false: the runId at once." },
        runId: str("A run's id."),
      }),
      handler: (a, c) => workflow(a as WorkflowArgs, c),
    },
    {
      name: "subagents_agents",
      description: "List the agent profiles: name, runner, one-line description.",
      inputSchema: object({}),
      handler: (a, c) => h.agents(a as Record<string, never>, c),
    },
  ];
}
