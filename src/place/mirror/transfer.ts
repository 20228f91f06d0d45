/**
 * Whole files over the mirror stream, in chunks: the sender reads a file once and sends it as `put` frames
 * at growing offsets; the receiver writes them to a temp file in the target's folder (a dot-name readers
 * skip), and only once the last byte is in does it fsync and rename it over the target, so a reader never
 * sees half of one and a connection lost mid-file leaves the old version in place.
 */
import { createHash, type Hash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { FILE_MODE, fsyncDir, openFreshNoFollow, writeAll } from "../../util/fsx.js";
import { checkRel, type Direction, ensureParent, readWhole, sha256 } from "./paths.js";
import { CHUNK, type FrameWriter, type Header, ProtocolError } from "./protocol.js";

type Put = Extract<Header, { t: "put" }>;

/** The temp name a file is received under; deterministic, so a relay restarted can finish or drop it. */
export const tempOf = (final: string): string =>
  path.join(path.dirname(final), `.${path.basename(final)}.mirror.tmp`);

interface Partial {
  rel: string;
  final: string;
  tmp: string;
  fh: fs.promises.FileHandle;
  size: number;
  got: number;
  hash: Hash;
  mtimeMs: number | undefined;
}

export class FileReceiver {
  private open: Partial | undefined;

  /**
   * @param beforeRename runs once the temp file is whole and synced, before it is renamed in (the relay
   * records the delivery there).
   */
  constructor(
    private readonly root: string,
    private readonly direction: Direction,
    private readonly beforeRename: (rel: string, sha: string, tmp: string) => void = () => {},
    /**
     * fsync each file and its folder before it counts as delivered (the far side's copies: the ledger
     * vouches for them). A mirror's copies are not: its feeder distrusts them after a restart instead.
     */
    private readonly durable = true,
  ) {}

  /**
   * Takes one chunk; returns the file's path and sha once it is complete and in place. Asynchronous: a
   * process serving many mirrors (a place's keeper, a relay hub) must not stop them all while a busy disk
   * takes its time over one file's sync or a large file's writes (a mirror's copy in one chunk, which waits
   * on neither, its feeder takes at once with takeWhole). Chunks of one receiver are taken one at a time.
   */
  async chunk(h: Put, payload: Buffer): Promise<{ rel: string; sha: string } | undefined> {
    if (h.off === 0) {
      if (this.open) throw new ProtocolError(`put of ${h.path} began before ${this.open.rel} was complete`);
      await this.begin(h);
    }
    const p = this.open;
    if (!p || p.rel !== h.path || h.off !== p.got || h.size !== p.size)
      throw new ProtocolError(`put of ${h.path.slice(0, 120)} at ${h.off} does not continue a file`);
    if (p.got + payload.length > p.size) throw new ProtocolError(`put of ${p.rel} runs past its size`);
    for (let at = 0; at < payload.length; ) at += (await p.fh.write(payload, at)).bytesWritten;
    p.got += payload.length;
    p.hash.update(payload);
    if (p.got < p.size) return undefined;
    return this.finish(p);
  }

  /**
   * Takes, at once, a put that is a whole file by itself into a receiver whose copies need no fsync (the
   * mirror's); undefined for any other put (chunk() takes it). A copy in one chunk is a handful of calls
   * that wait on no fsync, where the asynchronous path takes a trip through the thread pool for each (half
   * a millisecond apiece on a busy machine), and the completion that names the file is written after it.
   */
  takeWhole(h: Put, payload: Buffer): { rel: string; sha: string } | undefined {
    if (this.durable || h.off !== 0 || payload.length !== h.size) return undefined;
    if (this.open) throw new ProtocolError(`put of ${h.path} began before ${this.open.rel} was complete`);
    const rel = checkRel(h.path, this.direction);
    const final = path.join(ensureParent(this.root, rel), path.basename(rel));
    const tmp = tempOf(final);
    try {
      const fd = openFreshNoFollow(tmp);
      try {
        writeAll(fd, payload);
        if (h.mtimeMs !== undefined) fs.futimesSync(fd, new Date(), h.mtimeMs / 1000);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, final);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
    return { rel, sha: sha256(payload) };
  }

  /** Drops a file left incomplete (the connection ended). */
  abort(): void {
    const p = this.open;
    this.open = undefined;
    if (!p) return;
    p.fh
      .close()
      .then(
        () => fs.promises.rm(p.tmp, { force: true }),
        () => fs.promises.rm(p.tmp, { force: true }),
      )
      .catch(() => {});
  }

  private async begin(h: Put): Promise<void> {
    const rel = checkRel(h.path, this.direction);
    const final = path.join(ensureParent(this.root, rel), path.basename(rel));
    const tmp = tempOf(final);
    await fs.promises.rm(tmp, { force: true });
    const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
    const fh = await fs.promises.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
    this.open = {
      rel,
      final,
      tmp,
      fh,
      size: h.size,
      got: 0,
      hash: createHash("sha256"),
      mtimeMs: h.mtimeMs,
    };
  }

  private async finish(p: Partial): Promise<{ rel: string; sha: string }> {
    this.open = undefined;
    const sha = p.hash.digest("hex");
    try {
      // The far side's mtime, kept: it is how the next hello tells an unchanged file from a changed one.
      if (p.mtimeMs !== undefined) await p.fh.utimes(new Date(), p.mtimeMs / 1000);
      if (this.durable) await p.fh.sync();
    } finally {
      await p.fh.close();
    }
    try {
      this.beforeRename(p.rel, sha, p.tmp);
      await fs.promises.rename(p.tmp, p.final);
    } catch (e) {
      await fs.promises.rm(p.tmp, { force: true });
      throw e;
    }
    if (this.durable) fsyncDir(path.dirname(p.final));
    return { rel: p.rel, sha };
  }
}

/** Sends root/rel as put frames; returns what was sent, or undefined when the file is gone. */
export async function sendFile(
  out: FrameWriter,
  root: string,
  rel: string,
  withMtime: boolean,
): Promise<{ data: Buffer; mtimeMs: number } | undefined> {
  const w = readWhole(path.join(root, rel));
  if (w) await sendData(out, rel, w.data, withMtime ? w.mtimeMs : undefined);
  return w;
}

/** Sends `data` as the whole of file `rel` (one put frame per chunk; an empty file is one empty chunk). */
export async function sendData(
  out: FrameWriter,
  rel: string,
  data: Buffer,
  mtimeMs?: number,
  eager?: boolean,
): Promise<void> {
  let off = 0;
  do {
    const part = data.subarray(off, off + CHUNK);
    const h: Put = { t: "put", path: rel, size: data.length, off };
    if (mtimeMs !== undefined) h.mtimeMs = mtimeMs;
    if (eager) h.eager = true;
    await out.send(h, part);
    off += part.length;
  } while (off < data.length);
}
