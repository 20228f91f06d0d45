/**
 * The far side of test/fixtures/ns-place.mjs: a mount namespace pinned to a file, in which a private tmpfs
 * covers a primary's artifacts folder — the parent's processes cannot see what the namespace's hosts write
 * there. Root only (unshare, nsenter, mount). Torn down with every process in it.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { createNamespace } from "../fixtures/ns-place.mjs";
import { REPO } from "./cli.js";
import { pidsInNamespace } from "./ns-pids.js";

export const NS_MODULE = path.join(REPO, "test", "fixtures", "ns-place.mjs");

export interface NsPlace {
  /** The place name to spawn with (`ns:<target>`). */
  name: string;
  /** Folder of the pins (MUSTER_TEST_NS_DIR). */
  dir: string;
  /** Runs argv inside the namespace; returns its stdout. */
  inside(argv: string[]): string;
  /** Whether `file` exists as the namespace sees it. */
  existsInside(file: string): boolean;
  /** The processes running in the namespace. */
  pids(): number[];
  close(tmuxSocket: string): Promise<void>;
}

/** Makes namespace `target` under `dir`, a private tmpfs over each of `covered` (made if missing). */
export function makeNsPlace(dir: string, target: string, covered: string[]): NsPlace {
  const pin = createNamespace(dir, target, covered);
  const inode = fs.readlinkSync(`/proc/self/ns/mnt`);
  const nsId = (): string =>
    execFileSync("nsenter", [`--mount=${pin}`, "--", "readlink", "/proc/self/ns/mnt"])
      .toString()
      .trim();
  const ours = nsId();
  if (ours === inode) throw new Error("the namespace pin names this process's own mount namespace");
  const inside = (argv: string[]): string =>
    execFileSync("nsenter", [`--mount=${pin}`, "--", ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
    }).toString();
  const pids = (): number[] => pidsInNamespace("mnt", ours);
  return {
    name: `ns:${target}`,
    dir,
    inside,
    existsInside: (file) => {
      try {
        inside(["test", "-e", file]);
        return true;
      } catch {
        return false;
      }
    },
    pids,
    async close(tmuxSocket) {
      const socket = path.join(dir, `${target}-tmux`, `tmux-${process.getuid?.() ?? 0}`, tmuxSocket);
      try {
        execFileSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" });
      } catch {}
      for (let i = 0; i < 100; i++) {
        const left = pids();
        if (left.length === 0) break;
        for (const p of left)
          try {
            process.kill(p, i < 20 ? "SIGTERM" : "SIGKILL");
          } catch {}
        await new Promise((r) => setTimeout(r, 50));
      }
      execFileSync("umount", [pin]);
    },
  };
}
