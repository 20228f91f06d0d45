/**
 * One start of a turn, as every front end asks for it: a new child (an agent) or the next turn of a settled
 * child (resume). Which combinations make sense is decided here, once; each front end names the conflict in
 * its own words (its flags or parameters).
 */
import type { Caps } from "../artifacts/events.js";
import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import type { VerifyRequest } from "../base/verify-request.js";
import type { Placement } from "../mux/backend.js";
import type { FollowUp, TurnSettings } from "./send.js";
import type { SpawnOptions, SpawnResult } from "./spawn.js";

export interface StartRequest extends TurnSettings {
  prompt: string;
  /** A new child of this profile (default $MUSTER_AGENT, else the default agent). */
  agent?: string;
  /** Continue this settled child of the primary instead. */
  resume?: string;
  placement?: Placement;
  /** New children only: */
  cwd?: string;
  command?: string[];
  /** The backend to start it in, by registered name (default MUSTER_BACKEND, else tmux). */
  backend?: string;
  /** Where its host runs, by place name (default MUSTER_PLACE, else this machine). */
  place?: string;
  /** Or: the SSH host it runs on (`muster hosts add`), `any`, or a list to choose from (default: its profile's). */
  on?: string | string[];
  /** Or: a container of its own (merged over its profile's `container:`). */
  container?: ContainerRequest;
  /** "worktree": a git worktree of its own (a resumed child keeps the directory it had). */
  isolation?: string;
  group?: string;
  seal?: boolean;
  caps?: Caps;
  /** New children only: `on-lost[:N]` restarts a turn whose host or agent died (a resumed child keeps its policy). */
  restart?: string;
  /** A label for the new child, usable wherever its id is. */
  name?: string;
  /** New children only: the agent CLI's own TUI in the pane (a resumed child keeps its mode). */
  tui?: boolean;
  /** New children only: start from this child's conversation so far (default agent: that child's). */
  fork?: string;
  /** New children only: the acceptance check every answer must pass (a resumed child keeps its own). */
  verify?: VerifyRequest;
  /** New children only: told, in a line, of a slow step of the spawn (a worktree's set-up running). */
  onProgress?: (text: string) => void;
}

/** What is wrong with a start request, as data: each front end says it in its own words. */
export type StartConflict =
  /** both an agent (a new child) and a child to resume */
  | "agent_and_resume"
  /** a group is for new children */
  | "group_with_resume"
  /** a resumed child continues where it ran: no other backend */
  | "backend_with_resume"
  /** a place, a host and a container are answers to one question */
  | "on_with_place"
  /** resume continues a child as it was: no new argv, no new cwd */
  | "resume_with_command_or_cwd"
  /** sealing needs a group */
  | "seal_without_group"
  /** a resumed child keeps the name it has */
  | "name_with_resume"
  /** a fork is a new child; a resumed one continues its own conversation */
  | "fork_with_resume"
  /** a resumed child runs in the mode it ran in: no tui */
  | "tui_with_resume"
  /** caps are set when a child is spawned */
  | "caps_with_resume"
  /** a restart policy is set when a child is spawned */
  | "restart_with_resume"
  /** a child's acceptance check is set when it is spawned */
  | "verify_with_resume";

/**
 * The one rule of which start options combine, for the CLI, MCP and the library alike: the first conflict
 * found, or undefined. Every option of a request is either honoured or refused here, never dropped.
 */
export function startConflict(req: Omit<StartRequest, "prompt">): StartConflict | undefined {
  if (req.seal && req.group === undefined) return "seal_without_group";
  if ([req.on, req.place, req.container].filter((x) => x !== undefined).length > 1) return "on_with_place";
  if (req.resume === undefined) return undefined;
  if (req.agent !== undefined) return "agent_and_resume";
  if (req.group !== undefined) return "group_with_resume";
  if (
    req.backend !== undefined ||
    req.place !== undefined ||
    req.on !== undefined ||
    req.container !== undefined
  )
    return "backend_with_resume";
  if (req.name !== undefined) return "name_with_resume";
  if (req.fork !== undefined) return "fork_with_resume";
  if (req.tui) return "tui_with_resume";
  if (req.caps !== undefined) return "caps_with_resume";
  if (req.restart !== undefined) return "restart_with_resume";
  if (req.verify !== undefined) return "verify_with_resume";
  if (
    (req.command !== undefined && req.command.length > 0) ||
    req.cwd !== undefined ||
    req.isolation !== undefined
  )
    return "resume_with_command_or_cwd";
  return undefined;
}

const CONFLICT_TEXT: Record<StartConflict, string> = {
  agent_and_resume: "give an agent (a new child) or a child to resume, not both",
  group_with_resume: "a group takes new children, not a resumed one",
  backend_with_resume: "a resumed child continues where it ran: no other backend, place, host or container",
  on_with_place: "give one of a host (on), a place or a container",
  resume_with_command_or_cwd: "a resumed child continues as it was: no command and no cwd",
  seal_without_group: "seal goes with a group",
  name_with_resume: "a resumed child keeps its name",
  fork_with_resume: "a fork starts a new child; a resumed child continues its own conversation",
  tui_with_resume: "a resumed child continues in the mode it ran in: no tui",
  caps_with_resume: "caps are set when a child is spawned, not on resume",
  restart_with_resume: "a restart policy is set when a child is spawned, not on resume",
  verify_with_resume: "a child's acceptance check (verify) is set when it is spawned, not on resume",
};

/** What start() needs of the core. */
export interface Starter {
  spawn(opts: SpawnOptions): Promise<SpawnResult>;
  resume(
    idOrPrefix: string,
    prompt: string,
    opts: TurnSettings & { placement?: Placement },
  ): Promise<FollowUp>;
}

/** Spawns or resumes as the request says; a conflicting request starts nothing. */
export async function startTurn(m: Starter, req: StartRequest): Promise<SpawnResult | FollowUp> {
  const conflict = startConflict(req);
  if (conflict) throw new MusterError("invalid_argument", CONFLICT_TEXT[conflict]);
  const settings = {
    ...(req.model !== undefined ? { model: req.model } : {}),
    ...(req.reasoning !== undefined ? { reasoning: req.reasoning } : {}),
    ...(req.placement ? { placement: req.placement } : {}),
  };
  if (req.resume !== undefined) return m.resume(req.resume, req.prompt, settings);
  return m.spawn({
    ...(req.agent !== undefined ? { agent: req.agent } : {}),
    prompt: req.prompt,
    ...settings,
    ...(req.command && req.command.length > 0 ? { command: req.command } : {}),
    ...(req.cwd !== undefined ? { cwd: req.cwd } : {}),
    ...(req.group !== undefined ? { group: req.group } : {}),
    ...(req.seal ? { seal: true } : {}),
    ...(req.backend !== undefined ? { backend: req.backend } : {}),
    ...(req.place !== undefined ? { place: req.place } : {}),
    ...(req.on !== undefined ? { on: req.on } : {}),
    ...(req.container !== undefined ? { container: req.container } : {}),
    ...(req.isolation !== undefined ? { isolation: req.isolation } : {}),
    ...(req.caps ? { caps: req.caps } : {}),
    ...(req.restart !== undefined ? { restart: req.restart } : {}),
    ...(req.name !== undefined ? { name: req.name } : {}),
    ...(req.tui ? { tui: true } : {}),
    ...(req.fork !== undefined ? { fork: req.fork } : {}),
    ...(req.verify !== undefined ? { verify: req.verify } : {}),
    ...(req.onProgress ? { onProgress: req.onProgress } : {}),
  });
}
