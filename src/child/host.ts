/**
 * The child host: the command of a child's pane (started by argv, never through a shell).
 * Usage: node host.js <artifact-dir>. Runs turns from inbox/ one at a time, renders them,
 * records events, and idles between turns until cancelled.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isFarDir } from "../artifacts/admission.js";
import { treeBudgetSpent } from "../artifacts/budget.js";
import { closedDetail } from "../artifacts/closing.js";
import type { ChildMeta, ProviderError } from "../artifacts/events.js";
import { takeHostEnv } from "../artifacts/host-env.js";
import { readInboxItem } from "../artifacts/inbox.js";
import { type ChildFiles, childFiles, pathsOfArtifactDir, selfBinRoot } from "../artifacts/layout.js";
import { EventLog } from "../artifacts/log.js";
import { completeQueuedTurns } from "../artifacts/queued.js";
import { pauseLine, pauseTree, type TreePause } from "../artifacts/tree-pause.js";
import { ENV } from "../base/settings/resolve.js";
import { isStorageFailure } from "../base/storage-errors.js";
import { limitsFrom } from "../config/limits.js";
import { Notifier } from "../notify/notifier.js";
import { listTargets } from "../notify/targets.js";
import { getRunner } from "../runners/registry.js";
import { lastRunnerSessionOf, lastSettingsOf, sessionFileOf } from "../sessions/store.js";
import { readJson } from "../util/fsx.js";
import { ensureSelfBinDir } from "../util/self-bin.js";
import { CapGuard } from "./caps-guard.js";
import { ControlWatcher } from "./controls.js";
import { divertFailedRecords, turnFailure } from "./disk-full.js";
import { FarAdmission } from "./far-admission.js";
import { TurnSource } from "./input.js";
import { killOwnGroup, whenDirGone } from "./orphan-watch.js";
import { localPause, waitWhilePaused } from "./pause-gate.js";
import { PermissionBroker, permissionTimeoutMs } from "./permissions.js";
import { listenForPokes, safetyPollMs } from "./pokes.js";
import { PaneRenderer } from "./render.js";
import { DiskReserve } from "./reserve.js";
import { killLiveRunners, type Reap } from "./run-plan.js";
import { SessionEngine } from "./session-turn.js";
import { RunSlots } from "./slots.js";
import { TuiEngine } from "./tui-turn.js";
import { boundText, type Conversation, type Refusal, runTurn, type StopReason, TurnControl } from "./turn.js";
import { ONE_SHOT_ENGINE, type RunnerMode, runnerModeOf, type TurnEngine } from "./turn-engine.js";

/** Reads the spawning environment handed over in env.json and deletes the file (it may hold secrets). */
async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: muster child-host <artifact-dir>\n");
    process.exit(2);
  }
  // Before anything else: a poke (SIGUSR2) must never find the host without its handler.
  listenForPokes(dir);
  const files = childFiles(dir);
  const layout = pathsOfArtifactDir(dir);
  const render = new PaneRenderer();
  // Nothing may end the host with a stack trace in the pane (a full disk, a vanished file): one line, then exit;
  // the parent sees the host gone and settles what it left open.
  let engine: TurnEngine | undefined;
  const die = (e: unknown): never => {
    killLiveRunners();
    engine?.killNow();
    render.fatal(`muster child host stopped: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  };
  process.on("uncaughtException", die);
  process.on("unhandledRejection", die);
  // Its artifact dir gone (the state root deleted): unreachable by any muster command, it ends its agent and goes.
  whenDirGone(dir, () => {
    killLiveRunners();
    engine?.killNow();
    render.fatal(`muster child host stopped: its artifact dir ${dir} is gone`);
    killOwnGroup();
  });
  const meta = readJson<ChildMeta>(files.meta);
  const log = EventLog.open(files.events);
  // Space held back for the records that end a turn or the child on a disk that fills up (disk-full.ts).
  const reserve = new DiskReserve(files.reserve);
  process.on("exit", () => reserve.release());
  const captured = takeHostEnv(files.envFile, process.env);
  // The pane's own TMUX/TMUX_PANE are the truth for anything the child starts from here.
  const env: Record<string, string> = {
    ...captured,
    [ENV.artifactDir]: dir,
    [ENV.childId]: meta.id,
    [ENV.primary]: meta.primary,
    [ENV.depth]: String(meta.depth),
  };
  for (const k of ["TMUX", "TMUX_PANE"]) {
    const v = process.env[k];
    if (v) env[k] = v;
    else delete env[k];
  }
  // Agents call `muster progress|done|error`: this install's muster goes first on their PATH (state root =
  // <root>/primaries/<p>/artifacts/<id>), whether or not the user has muster on theirs.
  try {
    const selfBin = ensureSelfBinDir(selfBinRoot(layout.root));
    env.PATH = `${selfBin}${path.delimiter}${env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`;
  } catch (e) {
    render.info(`muster is not on this child's PATH: ${(e as Error).message}`);
  }

  // The person's notification targets (muster notify): told of what this child waits on, finishes or fails.
  // A host on another machine tells nobody: its place's keeper does, on the parent's machine, where the
  // config is and the targets are reachable (a notify config there would tell them twice).
  const targets = isFarDir(dir) ? [] : listTargets(env);
  const notifier = new Notifier(targets, { child: meta.id, agent: meta.agent }, (l) => render.info(l));
  log.onAppended = (e) => notifier.consider(e);
  render.banner(meta.id, meta.agent, meta.runner, dir);
  // A resumed host picks the conversation up where the session file left it.
  const sessionFile = sessionFileOf(dir);
  const last = lastSettingsOf(sessionFile);
  const conversation: Conversation = { sessionFile, ...last };
  const runnerSessionId = lastRunnerSessionOf(sessionFile);
  if (runnerSessionId) conversation.runnerSessionId = runnerSessionId;
  const runner = getRunner(meta.runner);
  const mode = runnerModeOf(meta.profile.runnerMode, env);
  engine = turnEngineOf(mode, { log, render, files, env });
  process.on("exit", () => engine?.killNow());
  log.append({
    type: "child_started",
    pid: process.pid,
    runner: meta.runner,
    by: process.argv[3] === "--resume" ? "resume" : "spawn",
  });

  let current: TurnControl | undefined;
  // From here a record the disk refuses fails the running turn instead of stopping the host.
  divertFailedRecords(
    log,
    () => current,
    (line) => render.info(line),
    layout.root,
  );
  // Caps outside the model: this child's (from its spawn) and the tree's (budget.json), checked as turns run.
  const caps = new CapGuard(layout.primary.dir, meta.id, meta.caps);
  // The previous turn's runner, settled but maybe still exiting: the next turn starts once it is gone.
  let reaping: Reap | undefined;
  let exitReason: "cancelled" | "lost" | undefined;
  // The turn that just ended settled cancelled (a cancel stopped it): the child's end is a cancel, not a close.
  let lastTurnCancelled = false;
  // In mode tui the pane's keys belong to the agent's TUI (a typed line reaches muster through its hooks).
  const typing = mode !== "tui" && process.stdin.isTTY ? process.stdin : undefined;
  const pollMs = safetyPollMs(env);
  const source = new TurnSource(files.inbox, typing, (why) => render.stderr(why), pollMs);
  // Questions this host's agent asked and still waits on (muster ask): the idle clock pauses meanwhile.
  const asking = new Set<string>();
  // The turn's acceptance check is running: like a question, that is no idle agent.
  let checking = false;
  const controls = new ControlWatcher(
    files.control,
    (req) => {
      if (req.kind === "interrupt") {
        // Only the turn the parent saw running: one that started since (its follow-up) is left alone.
        if (current?.turnId === req.turnId) {
          render.info(req.why === "steered" ? "interrupted: a follow-up runs now" : "stopped by the parent");
          current.stop(req.why);
        }
      } else if (req.kind === "ask" || req.kind === "answered") {
        const turn = current ? { turnId: current.turnId } : {};
        if (req.kind === "ask") {
          asking.add(req.requestId);
          log.append({
            type: "question",
            ...turn,
            requestId: req.requestId,
            text: boundText(req.text),
            ...(req.choices ? { choices: req.choices.map((c) => boundText(c, 200)) } : {}),
          });
          render.info(`question ${req.requestId.slice(-8)} to the parent: ${req.text}`);
        } else {
          asking.delete(req.requestId);
          log.append({
            type: "answered",
            ...turn,
            requestId: req.requestId,
            outcome: req.outcome,
            ...(req.outcome === "answered" ? { text: boundText(req.text) } : {}),
          });
          render.info(req.outcome === "answered" ? `answer: ${req.text}` : "no answer in time");
        }
        caps.setWaiting(asking.size > 0 || checking);
      } else if (req.kind === "progress") {
        log.append({
          type: "progress",
          ...(current ? { turnId: current.turnId } : {}),
          text: boundText(req.text),
        });
        render.info(`progress: ${req.text}`);
      } else if (current) {
        current.explicit = { status: req.kind === "done" ? "completed" : "errored", text: req.text };
        render.info(`explicit result recorded (muster ${req.kind})`);
      }
    },
    pollMs,
  );

  const finish = (reason: "cancelled" | "lost" | "error", detail: string): never => {
    // The host ends: what it held back is for the records that say so.
    reserve.release();
    reaping?.kill();
    engine?.killNow();
    source.close();
    controls.close();
    // The notices of what is recorded now (this end, turns dropped with it) must outlive this process.
    notifier.handOff(env, layout.primary.notifyLog);
    const dropped = completeQueuedTurns(files.inbox, log, {
      status: reason === "lost" ? "lost" : "cancelled",
      reason: detail,
      by: "child",
    });
    // A cancel that stopped no turn and dropped none closed an idle child: it is closed, not cancelled.
    if (reason === "cancelled" && dropped === 0 && !lastTurnCancelled)
      log.append({
        type: "child_exited",
        reason: "closed",
        detail: closedDetail(files.closing),
        by: "child",
      });
    else log.append({ type: "child_exited", reason, detail, by: "child" });
    log.close();
    render.exited(detail);
    process.exit(0);
  };
  const stopFor = (reason: StopReason, exit: "cancelled" | "lost" | undefined, detail: string) => () => {
    if (exit) exitReason = exit;
    if (current) current.stop(reason);
    else if (exit) finish(exit, detail);
  };
  const cancelled = stopFor("cancelled", "cancelled", "cancelled by muster cancel");
  const paneClosed = stopFor("lost", "lost", "the pane was closed");
  process.on("SIGTERM", cancelled);
  // A pane closed by `muster cancel` (its host had not started when the cancel came, so the cancel closed the
  // pane) is a cancel, not a lost child: the closing mark says which.
  process.on("SIGHUP", () => (fs.existsSync(files.closing) ? cancelled() : paneClosed()));
  // Ctrl-C from a person in the pane stops the running turn only; the child stays for follow-ups.
  process.on("SIGINT", stopFor("interrupted", undefined, ""));

  if (!runner) {
    render.stderr(`unknown runner "${meta.runner}"`);
    finish("error", `unknown runner "${meta.runner}"`);
    return;
  }
  // A parent cancelling this child marks it first: from then on no turn starts here.
  const closing = (): boolean => fs.existsSync(files.closing);
  // The primary's bound on running turns, shared with every other child host of the primary; a host whose
  // parent is on another machine asks that parent's keeper for its slot.
  const maxRunning = limitsFrom(env).maxRunning;
  const slots = isFarDir(dir)
    ? new FarAdmission(dir, maxRunning)
    : new RunSlots(layout.primary.slots, maxRunning, meta.id, dir, meta.parent);
  process.on("exit", () => slots.release());
  // Far from the parent its keeper holds the run slot's grant while the parent's tree is paused (the held
  // turn is recorded as here); on this machine the host reads the primary's pause itself.
  const pauseOf = slots instanceof FarAdmission ? () => undefined : localPause(layout.primary.dir);
  const pauseFor = (e: ProviderError, turnId: string): void => {
    // Far from the parent the pause is the parent's keeper's to write (it reads this completion there).
    if (slots instanceof FarAdmission) return;
    try {
      const p = pauseTree(layout.primary.dir, e, { child: meta.id, turnId });
      render.info(`${pauseLine(p)}: no new turn of this tree starts until muster resume-tree`);
    } catch (err) {
      render.stderr(`could not pause the tree: ${(err as Error).message}`);
    }
  };
  let n = 0;
  for (;;) {
    const file = await source.next();
    const item = readInboxItem(file);
    if (!item) {
      // Unreadable request: set it aside so it is neither lost nor retried forever.
      fs.renameSync(file, `${file}.bad`);
      render.stderr(`unreadable inbox file ${file} (renamed to .bad)`);
      continue;
    }
    // A paused tree starts no turn: this one waits (holding no run slot) until the pause lifts.
    const held = (p: TreePause): void => {
      log.append({
        type: "turn_held",
        turnId: item.turnId,
        kind: p.kind,
        reason: p.reason,
        ...(p.resetAt ? { resetAt: p.resetAt } : {}),
      });
      render.info(`${pauseLine(p)}; waiting (muster resume-tree lifts it)`);
    };
    if (slots instanceof FarAdmission) slots.onHeld = held;
    const unpaused = await waitWhilePaused(pauseOf, held, () => exitReason !== undefined || closing());
    if (!unpaused) finish(exitReason ?? "cancelled", "cancelled while the tree was paused");
    // A ticket the disk refuses: the turn goes on without one, failed at once, so it settles errored saying why.
    let slotFailure: Error | undefined;
    const granted = await slots
      .acquire(
        (running) => {
          log.append({ type: "turn_queued", turnId: item.turnId, running, limit: slots.max });
          render.info(
            `queued: ${running} turns of this primary are running (limit ${slots.max}); waiting for a slot`,
          );
        },
        () => exitReason !== undefined || closing(),
        item.turnId,
      )
      .catch((e: unknown) => {
        if (!isStorageFailure(e)) throw e;
        slotFailure = new Error(`cannot take a run slot: ${e.message}`, { cause: e });
        return true;
      });
    if (!granted) finish(exitReason ?? "cancelled", "cancelled while waiting for a run slot");
    // A parent is cancelling this child: the queued turn is dropped, never started.
    if (closing()) {
      slots.release();
      finish("cancelled", "cancelled by muster cancel");
    }
    n += 1;
    current = new TurnControl(item.turnId, (e) => turnFailure(e, layout.root));
    current.beforeDecide = () => controls.drain();
    if (slotFailure) current.fail(slotFailure);
    const primaryDir = layout.primary.dir;
    const refuse = (): Refusal | undefined => {
      if (closing())
        return { status: "cancelled", reason: "cancelled by muster cancel before the agent started" };
      const capped = caps.refuse();
      if (capped) return { status: "exhausted", reason: capped };
      // Far from its parent the tree's usage is not on this disk: the grant carried the budget's verdict.
      // Here this turn's own turn_started is already counted: the budget is about the turns before it.
      const spent = slots instanceof FarAdmission ? slots.budgetVerdict : treeBudgetSpent(primaryDir, true);
      return spent ? { status: "exhausted", reason: spent } : undefined;
    };
    const turn = current;
    turn.onMessage = (m) => caps.message(m);
    caps.start((why) => {
      render.info(why);
      turn.exhaust(why);
    });
    const { completion, reap } = await runTurn(
      {
        ...{ files, meta, log, render, runner, env, conversation, refuse, reserve, engine },
        pauseTree: pauseFor,
        checking: (running) => {
          checking = running;
          caps.setWaiting(asking.size > 0 || checking);
        },
      },
      item,
      file,
      n,
      current,
    );
    caps.stop();
    asking.clear();
    lastTurnCancelled = completion.status === "cancelled";
    current = undefined;
    reaping = reap;
    await reap.done;
    reaping = undefined;
    slots.release();
    if (exitReason || closing())
      finish(
        exitReason ?? "cancelled",
        exitReason === "lost" ? "the pane was closed" : "cancelled by muster cancel",
      );
    // Idle from here: a cancel now stops no turn.
    lastTurnCancelled = false;
    render.idle(meta.id);
  }
}

/**
 * How every turn of a child runs, chosen once from its mode: one long-lived agent process across turns where the
 * CLI has one (`session`), the CLI's own TUI (`tui`), or a process per turn (`oneshot`).
 */
function turnEngineOf(
  mode: RunnerMode,
  child: { log: EventLog; render: PaneRenderer; files: ChildFiles; env: Record<string, string> },
): TurnEngine {
  const { log, render, files } = child;
  switch (mode) {
    case "session":
      return new SessionEngine(
        new PermissionBroker({ log, render }, files.answers, permissionTimeoutMs(child.env)),
      );
    case "tui":
      return new TuiEngine({ log, render, inbox: files.inbox, runnerDir: files.runner });
    case "oneshot":
      return ONE_SHOT_ENGINE;
  }
}

void main();
