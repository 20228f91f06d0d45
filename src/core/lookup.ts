/** Finding a primary's children and loading them: by id, unique prefix or suffix, or name; or all of them. */
import { type ListOptions, type LoadedChild, loadChildOrUnreadable, resolveChildId } from "./children.js";
import type { CoreContext } from "./context.js";
import type { RegistryEntry } from "./registry.js";
import { findOwner } from "./send.js";

type Lookup = Pick<
  CoreContext,
  "root" | "primary" | "paths" | "registry" | "reload" | "reconcile" | "stallMs"
>;

/**
 * Several children from one read of the registry (a wait on 32 children reads it once, not 32 times);
 * `origin` says where this primary came from, for the message about a child of another primary.
 */
export function findChildren(m: Lookup, idsOrPrefixes: readonly string[], origin?: string): LoadedChild[] {
  return entriesFor(m, idsOrPrefixes, origin).map((entry) => m.reload(entry));
}

/** Full ids for ids, unique prefixes or suffixes, or names, from one read of the registry. */
export function resolveIds(m: Lookup, idsOrPrefixes: readonly string[], origin?: string): string[] {
  return entriesFor(m, idsOrPrefixes, origin).map((entry) => entry.id);
}

function entriesFor(m: Lookup, idsOrPrefixes: readonly string[], origin?: string): RegistryEntry[] {
  const elsewhere = (want: string) => {
    const owner = findOwner(m.root, want);
    return owner !== m.primary ? owner : undefined;
  };
  const doc = m.registry.read();
  return idsOrPrefixes.map((i) => resolveChildId(doc, i, elsewhere, origin));
}

/**
 * Every child of the primary, newest last (a broken one: "unreadable"). Each is reconciled with liveness
 * unless `probe` is false: then only files are read (a watcher settles dead hosts itself).
 */
export async function listChildren(m: Lookup, opts: ListOptions = {}): Promise<LoadedChild[]> {
  const entries = Object.values(m.registry.read().children).sort((a, b) => a.id.localeCompare(b.id));
  const out: LoadedChild[] = [];
  for (const entry of entries) {
    const kept = opts.reuse?.get(entry.id);
    if (kept && sameEntry(kept.entry, entry)) {
      out.push(kept);
      continue;
    }
    const c = loadChildOrUnreadable(m.paths, entry, { stallMs: m.stallMs });
    out.push(opts.probe === false ? c : await m.reconcile(c));
  }
  return out;
}

/** Whether a registry entry is unchanged (a resume, a new pane or name rewrites it). */
function sameEntry(a: RegistryEntry, b: RegistryEntry): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
