/** The child store of a child whose artifact dir is on this machine: the existing file functions, no more. */
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureDir, readJsonIfExists } from "../util/fsx.js";
import { assertFullId, isFullId } from "../util/ids.js";
import { withFileLock } from "../util/lock.js";
import { READ_CAPS } from "../util/safe-read.js";
import { readCancelSnapshot } from "./cancel-snapshot.js";
import { writeClosingMark } from "./closing.js";
import { type ControlRequest, writeControl } from "./control.js";
import type { ChildMeta, MusterEvent, OutputRef } from "./events.js";
import { type InboxItem, inboxTurnId, listInbox, writeInboxItem } from "./inbox.js";
import { childFiles } from "./layout.js";
import { EventLog } from "./log.js";
import { type MalformedLine, NdjsonReader, readAllRecords } from "./reader.js";
import { readSnapshot, snapshotHead } from "./snapshot.js";
import type { ChildStore, ChildStores } from "./store.js";

/** The store of the artifact dir `dir` on this machine. */
export function localChildStore(dir: string): ChildStore {
  const files = childFiles(dir);
  return {
    dir,
    files,
    eventsFile: files.events,
    hasEvents: () => fs.lstatSync(files.events, { throwIfNoEntry: false }) !== undefined,
    readEvents: (onMalformed?: (m: MalformedLine) => void) =>
      readAllRecords<MusterEvent>(files.events, onMalformed),
    eventReader: (cursor: number, onMalformed?: (m: MalformedLine) => void) =>
      new NdjsonReader<MusterEvent>(files.events, onMalformed, cursor),
    appendAsParent: <T>(fn: (events: MusterEvent[], log: EventLog) => T | Promise<T>) =>
      withFileLock(files.events, async () => {
        const events = readAllRecords<MusterEvent>(files.events);
        const log = EventLog.open(files.events);
        try {
          return await fn(events, log);
        } finally {
          log.close();
        }
      }),
    queuedTurns: () => listInbox(files.inbox).flatMap((f) => inboxTurnId(f) ?? []),
    dropInboxItem: (item: InboxItem) => writeInboxItem(files.inbox, item),
    writeControl: (req: ControlRequest) => writeControl(files.control, req),
    markClosing: (why?: string) => writeClosingMark(files.closing, why),
    isClosing: () => fs.existsSync(files.closing),
    clearClosing: () => fs.rmSync(files.closing, { force: true }),
    hasAnswer: (requestId: string) =>
      isFullId(requestId) && fs.existsSync(answerFile(files.answers, requestId)),
    writeAnswer: (requestId: string, text: string) => writeAnswerOnce(files.answers, requestId, text),
    readMeta: () => readJsonIfExists<ChildMeta>(files.meta, READ_CAPS.smallJson),
    readSnapshot: (ref: OutputRef) => readSnapshot(dir, ref),
    readSnapshotHead: (ref: OutputRef, maxBytes: number) => snapshotHead(dir, ref, maxBytes),
    readCancelSnapshot: (turnId: string) => readCancelSnapshot(dir, turnId),
  };
}

/** The stores of the children under `artifactsRoot` (`<primary>/artifacts`). */
export function localChildStores(artifactsRoot: string): ChildStores {
  return {
    root: artifactsRoot,
    child: (id: string) => localChildStore(path.join(artifactsRoot, assertFullId(id, "child id"))),
    list: () => {
      try {
        return fs
          .readdirSync(artifactsRoot, { withFileTypes: true })
          .filter((d) => d.isDirectory() && isFullId(d.name))
          .map((d) => d.name);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw e;
      }
    },
  };
}

const answerFile = (answers: string, requestId: string): string =>
  path.join(answers, `${assertFullId(requestId, "request id")}.json`);

/**
 * Written whole under a temporary name, then linked into place: the asker never reads half an answer, and a
 * second answer to the same request fails (false) instead of replacing the first.
 */
function writeAnswerOnce(answers: string, requestId: string, text: string): boolean {
  ensureDir(answers);
  const file = answerFile(answers, requestId);
  const tmp = path.join(answers, `.${requestId}.${process.pid}.tmp`);
  const fd = fs.openSync(tmp, "w", 0o600);
  try {
    fs.writeSync(fd, JSON.stringify({ v: 1, requestId, text, answeredAt: new Date().toISOString() }));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
