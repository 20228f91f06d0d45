/**
 * Pending requests: what a child's agent asked its parent and still waits on. One mechanism for every kind
 * (a `question` from `muster ask` today; a permission request later): the request is an event the child
 * host recorded, pending until an `answered` event names it, its turn settles or its host exits (folded with
 * the child's state, `core/state.ts`); the answer is a file the parent writes (answers/<requestId>.json, 0600,
 * created once) that the asker is watching.
 */
import { MusterError } from "../base/errors.js";
import { rawSetting } from "../base/settings/resolve.js";
import { shortId } from "../util/ids.js";
import { loadChildOrUnreadable, resolveChildId } from "./children.js";
import type { CoreContext } from "./context.js";
import { isChildName } from "./names.js";
import type { RegistryDoc } from "./registry.js";
import { childStores } from "./stores.js";

export interface PendingRequest {
  /** question: `muster ask`; permission: a live session's agent asks to use a tool (answers in `choices`). */
  type: "question" | "permission";
  /** The request id: what `muster answer <id>` names (its last 8 hex digits will do). */
  id: string;
  /** The child that asked, and its ancestors from the primary's first level down to it. */
  child: string;
  agent: string;
  /** The child's name (`spawn --name`), if it has one: what messages call it by. */
  name?: string;
  lineage: string[];
  text: string;
  choices?: string[];
  turnId?: string;
  askedAt: string;
  /** A permission request: the tool, and its input in one line. */
  tool?: string;
  summary?: string;
}

/** What a parent may answer to a permission request (child/permissions.ts reads the same words). */
export const PERMISSION_ANSWERS = ["allow", "allow_always", "deny"];

// An answer is bounded like a prompt.
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The ancestors of `id` (primary's first level first) and `id` itself, by the registry's parent links. */
function lineageOf(doc: RegistryDoc, id: string): string[] {
  const out = [id];
  for (let p = doc.children[id]?.parent; p && out.length < 64; p = doc.children[p]?.parent) out.unshift(p);
  return out;
}

/**
 * Every pending request of this primary's children, oldest first; inside a child (MUSTER_CHILD_ID), those
 * of its descendants. Each says who asked and through whom (lineage), so a grandchild's question reaching
 * the top is labelled with the path it came by.
 */
export function pendingRequests(m: CoreContext): PendingRequest[] {
  const doc = m.registry.read();
  const self = rawSetting(m.env, "childId");
  const out: PendingRequest[] = [];
  for (const entry of Object.values(doc.children)) {
    const lineage = lineageOf(doc, entry.id);
    if (self && (entry.id === self || !lineage.includes(self))) continue;
    // Its open requests are folded with its state (from the state's checkpoint, then what follows it).
    const c = loadChildOrUnreadable(m.paths, entry);
    if (c.unreadable) continue;
    for (const q of c.state.requests) {
      // Answered already, not yet taken by the asker: not the parent's to answer again.
      if (c.store.hasAnswer(q.requestId!)) continue;
      const common = {
        id: q.requestId!,
        child: entry.id,
        agent: entry.agent,
        ...(entry.name !== undefined ? { name: entry.name } : {}),
        lineage: self ? lineage.slice(lineage.indexOf(self) + 1) : lineage,
        ...(q.turnId ? { turnId: q.turnId } : {}),
        askedAt: q.ts,
      };
      if (q.type === "question")
        out.push({ type: "question", ...common, text: q.text, ...(q.choices ? { choices: q.choices } : {}) });
      else
        out.push({
          type: "permission",
          ...common,
          text: `permission for ${q.tool}${q.summary ? `: ${q.summary}` : ""}`,
          choices: PERMISSION_ANSWERS,
          tool: q.tool,
          ...(q.summary ? { summary: q.summary } : {}),
        });
    }
  }
  return out.sort((a, b) => a.askedAt.localeCompare(b.askedAt));
}

/** The pending requests that hold up the still-running `childIds` (their own or a descendant's). */
export function requestsHolding(m: CoreContext, childIds: string[]): PendingRequest[] {
  if (childIds.length === 0) return [];
  return pendingRequests(m).filter((r) => r.lineage.some((id) => childIds.includes(id)));
}

/**
 * The request `ref` names: a request id (full, or a unique prefix or suffix), else a child (id, short id or
 * name) with exactly one pending request of `type` (any type when absent).
 */
function findRequest(m: CoreContext, ref: string, type?: PendingRequest["type"]): PendingRequest {
  const idLike = /^[0-9a-f-]{4,36}$/.test(ref);
  if (!idLike && !isChildName(ref))
    throw new MusterError("invalid_argument", `invalid request id ${JSON.stringify(ref)}`);
  const all = pendingRequests(m);
  const hits = idLike ? all.filter((r) => r.id === ref || r.id.startsWith(ref) || r.id.endsWith(ref)) : [];
  if (hits.length > 1)
    throw new MusterError("invalid_argument", `request id ${ref} is ambiguous: give more of it`);
  if (hits.length === 1) return hits[0]!;
  // Bounded: a child with hundreds of pending requests must not make one error line of them all.
  const listed = (rs: PendingRequest[]): string =>
    rs
      .slice(0, 5)
      .map((r) => shortId(r.id))
      .join(", ") + (rs.length > 5 ? ` and ${rs.length - 5} more (muster inbox lists them)` : "");
  let child: string | undefined;
  try {
    child = resolveChildId(m.registry.read(), ref).id;
  } catch {
    child = undefined;
  }
  if (child === undefined)
    throw new MusterError(
      "not_found",
      `no pending request or child ${ref}${all.length > 0 ? `; pending: ${listed(all)}` : " (the inbox lists them)"}`,
    );
  const kind = type ?? "request";
  const its = all.filter((r) => r.child === child && (!type || r.type === type));
  if (its.length === 1) return its[0]!;
  if (its.length === 0)
    throw new MusterError(
      "not_found",
      `child ${ref} has no pending ${kind}${all.length > 0 ? `; pending: ${listed(all)}` : ""}`,
    );
  throw new MusterError(
    "invalid_argument",
    `child ${ref} has ${its.length} pending ${kind}s (${listed(its)}): name one by its id`,
  );
}

/**
 * Answers a pending request, named by its id (full, or a unique prefix or suffix) or by its child when that
 * child has exactly one pending request of the kind; the asker prints the text and goes on.
 */
export function answerRequest(
  m: CoreContext,
  idOrPart: string,
  text: string,
  type?: PendingRequest["type"],
): PendingRequest {
  if (text.trim() === "") throw new MusterError("invalid_argument", "the answer is empty");
  if (Buffer.byteLength(text) > MAX_ANSWER_BYTES)
    throw new MusterError("invalid_argument", `the answer is over ${MAX_ANSWER_BYTES} bytes`);
  const req = findRequest(m, idOrPart, type);
  if (type && req.type !== type)
    throw new MusterError(
      "invalid_argument",
      req.type === "question"
        ? `${shortId(req.id)} is a question: answer it with muster answer`
        : `${shortId(req.id)} is a permission request: answer it with muster allow or muster deny`,
    );
  if (req.choices && !req.choices.includes(text))
    throw new MusterError(
      "invalid_argument",
      `${req.type} ${shortId(req.id)} takes one of: ${req.choices.join(", ")}`,
    );
  if (!childStores(m.paths).child(req.child).writeAnswer(req.id, text))
    throw new MusterError("invalid_argument", `${req.type} ${shortId(req.id)} was answered already`);
  return req;
}
