/**
 * A child host on a disk that fills up (or fails otherwise) under it: a record that cannot be written fails
 * the running turn, in words naming the disk; the records that end a turn or the child are written with the
 * space the host held back (reserve.ts), so the turn still settles and the host lives on.
 */
import type { EventInput, MusterEvent } from "../artifacts/events.js";
import type { EventLog } from "../artifacts/log.js";
import { diskFullWords, isStorageFailure } from "../base/storage-errors.js";
import type { DiskReserve } from "./reserve.js";

/** Records without which a turn or the child cannot be settled: never dropped, written with the reserve. */
const ENDING: ReadonlySet<string> = new Set(["turn_started", "completion", "child_exited"]);

/** `e` as the reason of a failed turn: a full disk says so and names the disk (the state root's). */
export function turnFailure(e: Error, stateRoot: string): Error {
  const words = diskFullWords(e, stateRoot);
  if (!words || e.message.startsWith(words)) return e;
  // Node's own "ENOSPC: no space left on device, write" keeps its words; its code is said once, in front.
  return new Error(`${words}: ${e.message.replace(/\b(ENOSPC|EDQUOT): /g, "")}`, { cause: e });
}

/**
 * How the host's event log takes a record it could not write: any but an ending record fails the running
 * turn (which then settles errored saying why), or while idle is only noted in the pane. Ending records throw.
 */
export function divertFailedRecords(
  log: EventLog,
  running: () => { fail(e: Error): void } | undefined,
  note: (line: string) => void,
  stateRoot: string,
): void {
  log.divert = (e, input) => {
    if (!isStorageFailure(e) || ENDING.has(input.type)) return false;
    const turn = running();
    if (turn) turn.fail(e);
    else note(`not recorded (${input.type}): ${turnFailure(e, stateRoot).message}`);
    return true;
  };
}

/**
 * Appends an ending record; when the disk refuses it, gives up the reserve, tells `onFailure` (the turn fails),
 * and writes the record `build` makes then once more. A second failure is thrown: nothing is left to say it with.
 */
export function appendEnding(
  log: EventLog,
  reserve: DiskReserve | undefined,
  build: () => EventInput,
  onFailure: (e: Error) => void = () => {},
): MusterEvent {
  try {
    return log.append(build());
  } catch (e) {
    if (!isStorageFailure(e)) throw e;
    reserve?.release();
    onFailure(e);
    return log.append(build());
  }
}
