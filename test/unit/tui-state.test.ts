// mode tui's state (src/child/tui-state.ts): which phase each thing the holder hears moves the TUI to, and
// the questions the holder asks of it (may it paste, whose run a start is, how long to sleep, why not idle).
import { describe, expect, it } from "vitest";
import {
  mayPaste,
  notIdleBecause,
  TUI_CLOSED,
  type TuiEvent,
  type TuiState,
  tuiStep,
  wakeIn,
} from "../../src/child/tui-state.js";

const starting: TuiState = { phase: "starting", up: false, inputAt: 0 };
const idle: TuiState = { phase: "idle", up: true, inputAt: 100 };
const submitting: TuiState = { phase: "submitting", up: true, inputAt: 100 };
const mine: TuiState = { phase: "busy", up: true, inputAt: 100, by: "muster" };
const typed: TuiState = { phase: "busy", up: true, inputAt: 100, by: "person" };
const typedEarly: TuiState = { phase: "busy", up: false, inputAt: 0, by: "person" };
const interrupting: TuiState = { phase: "interrupting", up: true, inputAt: 100, settlesAt: 5000 };

/** [name, from, event, to]: every transition the holder relies on, one row each. */
const table: [string, TuiState, TuiEvent, TuiState][] = [
  ["a new process starts", TUI_CLOSED, { type: "opened" }, starting],
  ["a new process forgets the last one's run", typed, { type: "opened" }, starting],
  ["records after the exit are no TUI's", TUI_CLOSED, { type: "ready", at: 1, settleMs: 0 }, TUI_CLOSED],
  ["a start after the exit is no run", TUI_CLOSED, { type: "start" }, TUI_CLOSED],
  ["the exit closes a busy TUI", mine, { type: "exited" }, TUI_CLOSED],
  [
    "the ready record: idle once its settle time passed",
    starting,
    { type: "ready", at: 1000, settleMs: 1500 },
    { phase: "idle", up: true, inputAt: 2500 },
  ],
  [
    "a ready record while muster's paste waits (Codex's comes with the first prompt) keeps it waiting",
    submitting,
    { type: "ready", at: 300, settleMs: 0 },
    { ...submitting, inputAt: 300 },
  ],
  [
    "a ready record during a run a person typed before it keeps the run going",
    typedEarly,
    { type: "ready", at: 50, settleMs: 0 },
    { ...typedEarly, up: true, inputAt: 50 },
  ],
  ["its prompt on screen", starting, { type: "screen-ready" }, { phase: "idle", up: true, inputAt: 0 }],
  ["muster's paste", idle, { type: "pasted" }, submitting],
  ["no paste into a busy TUI", typed, { type: "pasted" }, typed],
  ["a start while muster's paste waits is muster's", submitting, { type: "start" }, mine],
  ["a start at an idle TUI was typed by a person", idle, { type: "start" }, typed],
  ["a start before the TUI said it was up: a person's", starting, { type: "start" }, typedEarly],
  ["a start while interrupting is a new run, a person's", interrupting, { type: "start" }, typed],
  ["the stop of muster's run", mine, { type: "stop" }, idle],
  ["the stop of a run typed before the TUI was up", typedEarly, { type: "stop" }, starting],
  ["the stop that ends an interrupt", interrupting, { type: "stop" }, idle],
  ["a late stop does not end muster's submit", submitting, { type: "stop" }, submitting],
  [
    "a dialog took the paste: not up after all",
    submitting,
    { type: "paste-lost" },
    { ...starting, inputAt: 100 },
  ],
  ["a submit given up on leaves the TUI idle", submitting, { type: "submit-ended" }, idle],
  ["a submit that started its run leaves it busy", mine, { type: "submit-ended" }, mine],
  [
    "muster's interrupt of a run",
    mine,
    { type: "interrupt", at: 1000, settleMs: 2000 },
    { phase: "interrupting", up: true, inputAt: 100, settlesAt: 3000 },
  ],
  [
    "an interrupt at an idle TUI still waits its moment",
    idle,
    { type: "interrupt", at: 1000, settleMs: 2000 },
    { phase: "interrupting", up: true, inputAt: 100, settlesAt: 3000 },
  ],
  ["no interrupt of a TUI that ended", TUI_CLOSED, { type: "interrupt", at: 1, settleMs: 2 }, TUI_CLOSED],
  ["a person's interrupt seen in the transcript", typed, { type: "interrupted-in-pane" }, idle],
  ["an interrupt not yet settled", interrupting, { type: "tick", at: 4999 }, interrupting],
  ["an interrupt settled by time alone", interrupting, { type: "tick", at: 5000 }, idle],
  ["time alone ends no run", typed, { type: "tick", at: 1e12 }, typed],
];

describe("mode tui: the TUI's phases", () => {
  it.each(table)("%s", (_name, from, event, to) => {
    expect(tuiStep(from, event)).toEqual(to);
  });

  it("a turn of muster's and then one a person typed, as the holder feeds them", () => {
    const seen: string[] = [];
    let s = TUI_CLOSED;
    const feed = (e: TuiEvent): void => {
      s = tuiStep(s, e);
      seen.push(s.by ? `${s.phase}:${s.by}` : s.phase);
    };
    feed({ type: "opened" });
    feed({ type: "ready", at: 0, settleMs: 0 });
    feed({ type: "pasted" });
    // Its start and stop in one read (one write to the hook file).
    feed({ type: "start" });
    feed({ type: "stop" });
    feed({ type: "submit-ended" });
    feed({ type: "start" });
    feed({ type: "stop" });
    feed({ type: "exited" });
    expect(seen).toEqual([
      "starting",
      "idle",
      "submitting",
      "busy:muster",
      "idle",
      "idle",
      "busy:person",
      "idle",
      "closed",
    ]);
  });
});

describe("mode tui: what the holder asks of the state", () => {
  it("pastes only into an idle TUI past its ready record's settle time", () => {
    expect(mayPaste(idle, 99)).toBe(false);
    expect(mayPaste(idle, 100)).toBe(true);
    for (const s of [TUI_CLOSED, starting, submitting, mine, typed, interrupting])
      expect(mayPaste(s, 1e12)).toBe(false);
  });

  it("sleeps until the state can change by time alone, else for the look interval", () => {
    expect(wakeIn(idle, 40, 3000)).toBe(60);
    expect(wakeIn(interrupting, 4000, 3000)).toBe(1000);
    expect(wakeIn(interrupting, 6000, 3000)).toBe(0);
    expect(wakeIn(starting, 0, 500)).toBe(500);
    expect(wakeIn(typed, 0, 3000)).toBe(3000);
  });

  it("says what the TUI was still doing when a prompt could not go in", () => {
    expect(notIdleBecause(starting)).toBe("it never became ready");
    expect(notIdleBecause(typed)).toBe("a run typed in its pane was still going");
    expect(notIdleBecause(mine)).toBe("its last run never ended");
    expect(notIdleBecause(interrupting)).toBe("an interrupted run had not settled");
    expect(notIdleBecause(TUI_CLOSED)).toBe("it ended");
  });
});
