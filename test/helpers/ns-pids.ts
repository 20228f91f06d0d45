import * as impl from "../fixtures/ns-pids.mjs";

/** Every process in the namespace `nsId` of `kind`, as /proc/<pid>/ns/<kind> names it (`mnt:[4026…]`). */
export const pidsInNamespace: (kind: "mnt" | "net" | "uts", nsId: string) => number[] = impl.pidsInNamespace;
