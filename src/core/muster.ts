import { type Budget, budgetReport, type TreeUsage, writeBudget } from "../artifacts/budget.js";
import type { MusterEvent } from "../artifacts/events.js";
import { type Group, sealGroup } from "../delivery/groups.js";
import { appendReceipts } from "../delivery/receipts.js";
import type { PaneRef, Placement, PopupOptions } from "../mux/backend.js";
import { type BestOfRequest, type BestOfStarted, startBestOf, waitBestOf } from "./best-of.js";
import { type CancelOptions, type CancelResult, cancelChildren, subtreeOf } from "./cancel.js";
import {
  type AgentInfo,
  type AgentList,
  listAgents,
  type ModelQuery,
  type ModelsAnswer,
  models,
  showAgent,
} from "./catalog.js";
import { type ListOptions, type LoadedChild, loadChild } from "./children.js";
import { type CompareView, compareGroup } from "./compare.js";
import { type DoctorReport, doctor } from "./doctor.js";
import { collectGarbage, type GcOptions, type GcReport } from "./gc.js";
import { buildInbox, type InboxRead } from "./inbox.js";
import { type ChildDiff, diffChild, type MergeOutcome, mergeChild } from "./isolation.js";
import { type JudgeOptions, type JudgeOutcome, judgeGroup } from "./judge.js";
import { type ChildLog, childLog } from "./logs-follow.js";
import { findChildren, listChildren, resolveIds } from "./lookup.js";
import {
  attachCommandOf,
  attachTo,
  capturePane,
  focusPane,
  popupOver,
  viewCommandOf,
} from "./pane-actions.js";
import { listPrimaries } from "./primary.js";
import type { RegistryEntry } from "./registry.js";
import { type RemovedChild, type RemoveOptions, removeChildren } from "./remove.js";
import { answerRequest, type PendingRequest, pendingRequests } from "./requests.js";
import { reconcileChild } from "./restart.js";
import { deliverResult, type TurnResult } from "./results.js";
import { resumeChild } from "./resume.js";
import { type FollowUp, type SendMode, sendTo, stopTurnOf, type TurnSettings } from "./send.js";
import { CoreSetup, type MusterOptions } from "./setup.js";
import { type SpawnOptions, type SpawnResult, spawnChild } from "./spawn.js";
import { type StartConflict, type StartRequest, startConflict, startTurn } from "./start.js";
import { resumeTreeOf, type TreePauseView, treePauseOf } from "./tree-pause.js";
import { type ChildDetailView, type ChildView, childView, detailView } from "./views.js";
import { type WaitOptions, type WaitOutcome, waitDelivering, waitForGroup } from "./wait.js";
import { eventStream, PrimaryWatcher, type WatchOptions } from "./watcher.js";

/**
 * The core: every front end (CLI, MCP, library) calls these and nothing else. The core's own modules take it
 * as their CoreContext (checked where `this` is handed to them); the members marked internal are left out of
 * the published declarations, so a library user sees views only. What it stands on (env, primary, backends,
 * settings) is its CoreSetup.
 */
export class Muster extends CoreSetup {
  /** Starts a child in a new pane with its first turn queued; returns at once. Nothing is left behind on failure. */
  spawn(opts: SpawnOptions): Promise<SpawnResult> {
    return spawnChild(this, opts);
  }

  /** A new child (agent) or the next turn of a settled one (resume), as one request; see StartRequest. */
  start(req: StartRequest): Promise<SpawnResult | FollowUp> {
    return startTurn(this, req);
  }

  /** What is wrong with a start request (check it before reading a prompt), or undefined. */
  startConflict(req: Omit<StartRequest, "prompt">): StartConflict | undefined {
    return startConflict(req);
  }

  /** Queues the child's next turn (it starts when the current one ends); the child must still be running. */
  async send(
    idOrPrefix: string,
    prompt: string,
    opts: TurnSettings & { mode?: Exclude<SendMode, "stop"> } = {},
  ): Promise<FollowUp> {
    return sendTo(this, idOrPrefix, prompt, opts);
  }

  /** Stops the child's running turn and keeps the child (`send --mode stop`); the turn stopped, if any. */
  stopTurn(idOrPrefix: string): { id: string; turnId?: string } {
    return stopTurnOf(this, idOrPrefix);
  }

  /**
   * Continues a settled child owned by this primary: a new turn in its pane, or — when the pane's host is
   * gone — in a new pane, from its stored conversation (native runner resume, or a transcript).
   */
  resume(
    idOrPrefix: string,
    prompt: string,
    opts: TurnSettings & { placement?: Placement } = {},
  ): Promise<FollowUp> {
    return resumeChild(this, idOrPrefix, prompt, opts);
  }

  /** Waits for the named children's current turns and consumes the results' delivery records; see waitForTurns. */
  wait(idsOrPrefixes: string[], opts: WaitOptions = {}): Promise<WaitOutcome> {
    return waitDelivering(this, this.children(idsOrPrefixes), opts);
  }

  /** Waits for an explicit group, which it seals; see waitForGroup. */
  waitGroup(
    groupId: string,
    opts: Omit<WaitOptions, "mode"> & { onMembers?: (ids: string[]) => void } = {},
  ): Promise<WaitOutcome> {
    return waitForGroup(this, groupId, opts);
  }

  /**
   * The ready delivery manifest: completions not yet consumed (by a result, a wait or an earlier inbox
   * read), oldest first, bounded. `consume()` records receipts; call it after the manifest was handed on,
   * so a crash in between can only repeat a manifest, never lose one.
   */
  inbox(): InboxRead {
    return buildInbox(this);
  }

  /** Every pending request (questions, permissions) of this primary's children, oldest first, unbounded. */
  requests(): PendingRequest[] {
    return pendingRequests(this);
  }

  /** Answers a child's pending question (`muster ask`): the asker prints the text and goes on. */
  answer(requestId: string, text: string, type?: PendingRequest["type"]): PendingRequest {
    return answerRequest(this, requestId, text, type);
  }

  /**
   * Best-of-N: N children on the same task, each in a git worktree of its own, in a completion group of their
   * own; returns the group and the candidates at once. A failed spawn undoes the whole run.
   */
  bestOf(req: BestOfRequest): Promise<BestOfStarted> {
    return startBestOf(this, req);
  }

  /** Waits for every candidate of a best-of run; the results in the run's order (see waitGroup). */
  waitBestOf(
    group: string,
    opts: Omit<WaitOptions, "mode" | "turns"> & { onMembers?: (ids: string[]) => void } = {},
  ): Promise<WaitOutcome> {
    return waitBestOf(this, group, opts);
  }

  /** A best-of run's candidates side by side (outcome, check, branch, diff size, usage, duration, verdict). */
  compare(group: string): Promise<CompareView> {
    return compareGroup(this, group);
  }

  /** Asks `agent` to pick a settled best-of run's winner; a verdict naming a candidate is recorded. */
  judge(group: string, agent: string, opts: JudgeOptions = {}): Promise<JudgeOutcome> {
    return judgeGroup(this, group, agent, opts);
  }

  /** Seals an explicit group: it takes no more members and is delivered once every member has settled. */
  sealGroup(groupId: string): Promise<Group> {
    return sealGroup(this.paths.groups, groupId);
  }

  /** The tree's pause (a provider refused a turn of it: quota, credential), or undefined when none holds. */
  treePause(): TreePauseView | undefined {
    return treePauseOf(this);
  }

  /** Lifts the tree's pause: turns held by it start again. `resumed`: the pause that was in force, if any. */
  resumeTree(): { resumed: TreePauseView | null } {
    return resumeTreeOf(this);
  }

  /** The tree's shared budget and what the tree has used so far. */
  budget(): { budget: Budget | null; used: TreeUsage; exhausted: string | null } {
    return budgetReport(this.paths.dir);
  }

  /**
   * Sets (or with null clears) the shared budget. A new budget counts from now: turns that ran before it
   * do not use it up. Changing a budget in force keeps its start (raising a limit does not refill it).
   */
  setBudget(b: Omit<Budget, "v" | "since"> | null): void {
    if (b !== null) this.claimPrimary();
    writeBudget(this.paths.dir, b);
  }

  /** Marks delivery records consumed (receipts are appended with fsync). */
  consume(recordIds: string[], by: string): void {
    appendReceipts(this.paths.receipts, recordIds, by);
  }

  /**
   * The result of a settled turn (default: the latest), with the snapshot text verified against its sha256.
   * `turn` may be the turn's id, its number, its short id or a unique prefix (see resolveTurn).
   */
  result(idOrPrefix: string, turn?: string): TurnResult {
    return deliverResult(this.paths.receipts, this.child(idOrPrefix), turn);
  }

  /**
   * Cancels a child and every descendant (or, with no id, every child of the primary), deepest level
   * first, each level in parallel, walking the registry's parent links rather than anything displayed;
   * one result per node. Queued turns are dropped before any turn is stopped; panes are closed unless kept.
   */
  async cancelTree(idOrPrefix?: string, opts: CancelOptions = {}): Promise<CancelResult[]> {
    return cancelChildren(this, this.subtree(idOrPrefix), opts);
  }

  /** A child and all its descendants (with no id, every child of the primary), by the registry's parent links. */
  subtree(idOrPrefix?: string): string[] {
    return subtreeOf(this.registry.read(), idOrPrefix);
  }

  /** Cancels these children (each id resolved first: an unknown one cancels nothing), all at once. */
  cancelMany(idsOrPrefixes: string[], opts: CancelOptions = {}): Promise<CancelResult[]> {
    const ids = idsOrPrefixes.map((i) => this.child(i).entry.id);
    return cancelChildren(this, [...new Set(ids)], opts);
  }

  /** Cancels the running turn (and any queued) and closes the child and its pane (unless keepPane). */
  async cancel(idOrPrefix: string, opts: CancelOptions = {}): Promise<CancelResult> {
    return (await this.cancelMany([idOrPrefix], opts))[0]!;
  }

  /**
   * All children of this primary, newest last, each reconciled with liveness (a broken one: "unreadable").
   * @internal the core's loaded state; a front end or library user reads `views()`.
   */
  list(opts: ListOptions = {}): Promise<LoadedChild[]> {
    return listChildren(this, opts);
  }

  /** Every child of this primary as plain data, newest last; `probe: false` reads files only (no liveness probe). */
  async views(opts: { probe?: boolean } = {}): Promise<ChildView[]> {
    return (await listChildren(this, opts)).map(childView);
  }

  /** Every primary under the state root with its children as plain data, this one included. */
  async viewsAll(): Promise<{ primary: string; children: ChildView[] }[]> {
    const out = [];
    for (const primary of listPrimaries(this.root)) {
      const other = primary === this.primary ? this : new Muster({ home: this.root, primary, env: this.env });
      out.push({ primary, children: await other.views() });
    }
    return out;
  }

  /** Removes settled children past their age (see GcOptions); never touches a running one. */
  gc(opts: GcOptions): Promise<GcReport> {
    return collectGarbage(this, opts);
  }

  /** An isolated child's work against the HEAD it started from (`git diff`, or its stat). */
  diff(idOrPrefix: string, opts: { stat?: boolean } = {}): Promise<ChildDiff> {
    return diffChild(this, idOrPrefix, opts);
  }

  /**
   * Merges an isolated child's branch into the parent's checkout; a conflict is aborted and named. `force`
   * merges a child flagged for writing into the parent's checkout or for a worktree that is gone.
   */
  merge(idOrPrefix: string, opts: { force?: boolean } = {}): Promise<MergeOutcome> {
    return mergeChild(this, idOrPrefix, opts);
  }

  /** Removes children in one step (pane, artifacts, conversation, registry entry); see RemoveOptions. */
  remove(idsOrPrefixes: string[], opts: RemoveOptions = {}): Promise<RemovedChild[]> {
    return removeChildren(this, idsOrPrefixes, opts);
  }

  /** One child, reconciled with liveness. @internal the core's loaded state; others read `view(id)`. */
  async status(idOrPrefix: string): Promise<LoadedChild> {
    return this.reconcile(this.child(idOrPrefix));
  }

  /** One child as plain data (see ChildView), reconciled with liveness. */
  async view(idOrPrefix: string): Promise<ChildView> {
    return childView(await this.status(idOrPrefix));
  }

  /** One child in detail: its view, the argv that attaches to its pane, the snapshot kept of its last turn. */
  async detail(idOrPrefix: string): Promise<ChildDetailView> {
    return detailView(this, await this.status(idOrPrefix));
  }

  /** A child's events: so far, or followed until its host exits, and the heads of its answers. */
  logs(idOrPrefix: string): ChildLog {
    return childLog(this, this.child(idOrPrefix));
  }

  /** Turns a dead host into a recorded `lost`; returns the child's fresh state. @internal */
  reconcile(c: LoadedChild): Promise<LoadedChild> {
    return reconcileChild(this, c);
  }

  async capture(idOrPrefix: string, lines = 200): Promise<{ id: string; text: string }> {
    return capturePane(this, idOrPrefix, lines);
  }

  /** argv that attaches a terminal to a child's pane, from its own backend; null before it has one. */
  attachCommand(idOrPrefix: string): string[] | null {
    return attachCommandOf(this, this.child(idOrPrefix));
  }

  /** argv for one more viewer of a child's pane (a page's terminal); read-only unless `input`. */
  viewCommand(idOrPrefix: string, opts: { input: boolean }): { id: string; command: string[] } {
    return viewCommandOf(this, idOrPrefix, opts);
  }

  /** Brings a child's pane to the front of the calling client (inside its multiplexer). */
  focus(idOrPrefix: string): Promise<void> {
    return focusPane(this, this.child(idOrPrefix));
  }

  popup(target: { id: string } | { argv: string[]; cwd?: string }, opts: PopupOptions = {}): Promise<void> {
    return popupOver(this, target, opts);
  }

  attach(idOrPrefix: string): { id: string; pane: PaneRef; command: string[] } {
    return attachTo(this, idOrPrefix);
  }

  /** The agent profiles found from this primary's cwd, each with whether it could start here. */
  agents(opts: { compat?: boolean } = {}): AgentList {
    return listAgents({ cwd: this.cwd, env: this.env, ...opts });
  }

  /** One agent profile in full. */
  agent(name: string, opts: { compat?: boolean } = {}): AgentInfo {
    return showAgent(name, { cwd: this.cwd, env: this.env, ...opts });
  }

  /** One bounded question to the model catalog. */
  models(q: ModelQuery, opts: { compat?: boolean } = {}): ModelsAnswer {
    return models(q, { cwd: this.cwd, env: this.env, ...opts });
  }

  /** What is available here: the multiplexer, the runners, the agent CLIs. */
  doctor(): Promise<DoctorReport> {
    return doctor(this.env, this.backends);
  }

  /** Starts the long-lived watcher of this primary (events of every child, lost detection). */
  async watch(opts: WatchOptions): Promise<PrimaryWatcher> {
    // The watcher follows this primary's artifacts directory, so the primary must exist (and keep its id).
    this.claimPrimary();
    const w = new PrimaryWatcher(this, opts);
    await w.start();
    return w;
  }

  /** Every event of every child of this primary as an async iterator (existing events first); break to stop. */
  events(opts: { livenessMs?: number } = {}): AsyncGenerator<{ id: string; event: MusterEvent }> {
    return eventStream((o) => this.watch(o), opts);
  }

  /** The full id of a child named by id, unique prefix or suffix, or name (throws not_found), loading nothing. */
  resolve(idOrPrefix: string): string {
    return resolveIds(this, [idOrPrefix], this.own.origin)[0]!;
  }

  /** @internal one child's loaded state (throws not_found); others read `view(id)`. */
  child(idOrPrefix: string): LoadedChild {
    return this.children([idOrPrefix])[0]!;
  }

  /** Several children from one read of the registry (see findChildren). @internal */
  children(idsOrPrefixes: readonly string[]): LoadedChild[] {
    return findChildren(this, idsOrPrefixes, this.own.origin);
  }

  /** @internal */
  reload(entry: RegistryEntry): LoadedChild {
    return loadChild(this.paths, entry, { stallMs: this.stallMs });
  }
}

export const createMuster = (opts: MusterOptions = {}): Muster => new Muster(opts);

export type { CancelOptions, CancelResult, MusterEvent, MusterOptions, SpawnOptions, SpawnResult };
