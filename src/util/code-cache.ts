/**
 * Runs a CommonJS bundle from V8's code cache. Compiling the CLI's bundle took ~20 ms of a command's ~70 ms
 * start on Node 20, which has no compile cache of its own (`module.enableCompileCache` is Node 22+, and an ES
 * module cannot be handed cached data at all). A `vm.Script` can: the first run of a build compiles as usual
 * and writes what V8 compiled (the bundle's top level and every function the command ran) to the user's cache
 * folder; later runs start from it.
 *
 * Loaded by bin/muster.js on every CLI command, so it imports only what a node start has loaded already.
 */

import { isAscii } from "node:buffer";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import * as vm from "node:vm";

export interface CachedLoadOptions {
  /**
   * Names the bundle's bytes (a hash of them). V8 checks a cache against the source's length only, so a cache
   * made from another build of the same length would be taken: the name keeps each build's cache apart.
   */
  build: string;
  /**
   * What the bundle's `require(id)` returns for these ids instead of loading a file: an ES module already loaded,
   * or the caller's own import() (code a `vm.Script` compiled cannot import without an experimental flag).
   */
  provided?: Readonly<Record<string, unknown>>;
  /**
   * Modules (Node's own) loaded when the bundle first uses one of their exports rather than when a module of it
   * names them: the bundle runs every module's top level at start, and most commands never spawn a process,
   * hash or open a socket.
   */
  lazy?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

export interface CachedBundle {
  exports: Record<string, unknown>;
  /** Whether this run started from a cache V8 took. */
  fromCache: boolean;
  /**
   * Writes the cache when there was none or V8 refused it (another Node). Call it once the command is done, so
   * the functions it ran are in it too. Never throws: without a cache the next run only compiles again.
   */
  save(): Promise<void>;
}

/**
 * Where the caches go: `$XDG_CACHE_HOME/muster/code-cache` (else ~/.cache), or nowhere with MUSTER_CODE_CACHE=0
 * (read here, not through the settings table's code, which this module must not load; the same words for off).
 */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (["0", "false", "no", "off"].includes((env.MUSTER_CODE_CACHE ?? "").trim().toLowerCase()))
    return undefined;
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache");
  return path.join(base, "muster", "code-cache");
}

/** The cache file of one build of one bundle on this Node (its V8) and architecture. */
export function cacheFileOf(dir: string, bundle: string, build: string): string {
  if (!/^[0-9a-f]{8,64}$/.test(build))
    throw new Error(`muster: a bundle's build name must be hex, got "${build}"`);
  return path.join(dir, `${path.basename(bundle)}-${build}-${process.version}-${process.arch}.bin`);
}

/** Loads and runs `file`, a CommonJS bundle, from its code cache when there is one; see the module's comment. */
export function loadCommonJsCached(file: string, opts: CachedLoadOptions): CachedBundle {
  // A bundle in ASCII (as the CLI's build makes it) reads as Latin-1, without decoding UTF-8 (2–6 ms of 840 KB).
  const bytes = fs.readFileSync(file);
  const source = bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
  const dir = codeCacheDir(opts.env ?? process.env);
  const cacheFile = dir === undefined ? undefined : cacheFileOf(dir, file, opts.build);
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile !== undefined) cachedData = fs.readFileSync(cacheFile);
  } catch {
    // None yet (or unreadable): compile as Node would.
  }
  // The wrapper stays on the source's first line, so line numbers in stack traces are the bundle's own.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
  });
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const load = createRequire(file);
  const provided: Record<string, unknown> = { ...opts.provided };
  for (const id of opts.lazy ?? []) provided[id] ??= loadedOnUse(() => load(id) as object);
  const require = Object.assign((id: string) => (Object.hasOwn(provided, id) ? provided[id] : load(id)), {
    resolve: load.resolve,
    cache: load.cache,
  });
  const module = { exports: {} as Record<string, unknown> };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, require, module, file, path.dirname(file));
  return {
    exports: module.exports,
    fromCache,
    async save() {
      if (cacheFile === undefined || fromCache) return;
      try {
        const { ensureDir, writeFileAtomic } = await import("./fsx.js");
        ensureDir(path.dirname(cacheFile));
        // Not durable: a cache lost in a crash only costs one compile.
        writeFileAtomic(cacheFile, script.createCachedData(), undefined, false);
        pruneOtherBuilds(path.dirname(cacheFile), path.basename(file), cacheFile);
      } catch {
        // A read-only or full home: the next run compiles again.
      }
    },
  };
}

/** A module's exports that load it on first use: every read, `in` or listing of its names goes to the real one. */
function loadedOnUse(load: () => object): object {
  let real: object | undefined;
  const target = () => {
    real ??= load();
    return real;
  };
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(target(), key),
      has: (_, key) => Reflect.has(target(), key),
      ownKeys: () => Reflect.ownKeys(target()),
      // Reported configurable: a proxy may not claim a fixed property its own (empty) target lacks.
      getOwnPropertyDescriptor: (_, key) => {
        const d = Reflect.getOwnPropertyDescriptor(target(), key);
        return d === undefined ? undefined : { ...d, configurable: true };
      },
    },
  );
}

/** Removes the caches of other builds of the same bundle once they are a week old (another install may still use one). */
function pruneOtherBuilds(dir: string, bundle: string, keep: string): void {
  const weekAgo = Date.now() - 7 * 24 * 3600_000;
  for (const name of fs.readdirSync(dir)) {
    const f = path.join(dir, name);
    if (f === keep || !name.startsWith(`${bundle}-`) || !name.endsWith(".bin")) continue;
    try {
      if (fs.statSync(f).mtimeMs < weekAgo) fs.rmSync(f, { force: true });
    } catch {
      // Gone already, or another run's.
    }
  }
}
