import * as fs from "node:fs";

/** Every process in the namespace `nsId` of `kind`, as /proc/<pid>/ns/<kind> names it (`mnt:[4026…]`). */
export function pidsInNamespace(kind: "mnt" | "net", nsId: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return fs.readlinkSync(`/proc/${n}/ns/${kind}`) === nsId;
      } catch {
        return false;
      }
    })
    .map(Number);
}
