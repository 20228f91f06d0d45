import * as fs from "node:fs";

/*
 * The CLI's stdout, written past Node's stream where it can be. `process.stdout` is made at its first use and
 * loads Node's stream modules: ~1.4 ms into a file, ~2.6 ms into a pipe, a tenth of a quick command's start. Until
 * something makes the stream, text goes to fd 1 in blocking writes, each whole before the call returns; once it is
 * made (a terminal, a command that streams), all of it goes through the stream, so nothing is written out of order.
 */

let made = false;

/** Notes the moment anything makes `process.stdout` (Node's getter makes it once and keeps it). */
function watchStream(): void {
  const own = Object.getOwnPropertyDescriptor(process, "stdout");
  const get = own?.get;
  if (!get || !own.configurable) {
    made = true;
    return;
  }
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: own.enumerable ?? true,
    get() {
      made = true;
      return get.call(process);
    },
  });
}
watchStream();

/** Whether stdout is a terminal; a pipe, a file or /dev/null is known not to be without making the stream. */
export function stdoutIsTTY(): boolean {
  if (!made) {
    try {
      const st = fs.fstatSync(1);
      if (!st.isCharacterDevice() || st.rdev === fs.statSync("/dev/null").rdev) return false;
    } catch {
      return false;
    }
  }
  return process.stdout.isTTY === true;
}

/** Writes `text` to stdout; a reader that went away ends the command quietly, as with the stream. */
export function writeStdout(text: string): void {
  if (made) {
    process.stdout.write(text);
    return;
  }
  const bytes = Buffer.from(text);
  let done = 0;
  while (done < bytes.length) {
    try {
      done += fs.writeSync(1, bytes, done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A non-blocking fd 1 (shared with a process that set it so) that is full: the stream waits for room.
      if (code === "EAGAIN") {
        process.stdout.write(bytes.subarray(done));
        return;
      }
      // As SIGPIPE ends other tools (Node ignores it): the reader is gone, so is the point of going on.
      if (code === "EPIPE") process.exit(0);
      throw e;
    }
  }
}
