import { randomFillSync } from "node:crypto";
import * as fs from "node:fs";

/*
 * Random bytes from the kernel's generator, read from /dev/urandom 4 KiB at a time and handed out from that pool
 * (as Node's own randomUUID does). node:crypto reads the same source, but loading it costs a command ~3 ms (it
 * loads Node's stream modules), and a quick command needs nothing else of it: ids and temporary names. Where
 * there is no /dev/urandom, node:crypto fills the pool.
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

/** `n` random bytes, as node:crypto's randomBytes gives them. */
export function randomBytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  let filled = 0;
  while (filled < n) {
    if (used === pool.length) refill();
    const take = Math.min(n - filled, pool.length - used);
    pool.copy(out, filled, used, used + take);
    used += take;
    filled += take;
  }
  return out;
}

function refill(): void {
  try {
    const fd = fs.openSync("/dev/urandom", "r");
    try {
      for (let got = 0; got < pool.length; ) {
        const n = fs.readSync(fd, pool, got, pool.length - got, null);
        if (n <= 0) throw new Error("/dev/urandom ended");
        got += n;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    randomFillSync(pool);
  }
  used = 0;
}
