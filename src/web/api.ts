/**
 * The web page's API: reads (GET, no state change) and actions (POST with a JSON body), each one call of the
 * core. What a child wrote travels as data (JSON); the page puts it on screen as text, never as markup.
 */
import { MusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import type { ChildDetailView } from "../core/views.js";

/** One API answer: a status and a JSON-safe body. */
export interface Reply {
  status: number;
  body: unknown;
}

// A turn's answer shown in the page: its head, the rest says how much was left out.
const RESULT_HEAD_BYTES = 256 * 1024;
const PANE_LINES = 300;

/** A child's detail with its last answer's text read (not delivered: a parent's inbox still gets it). */
export interface DetailReply extends ChildDetailView {
  result?: { turnId: string; text: string; truncated: boolean };
}

async function detail(m: Muster, id: string): Promise<DetailReply> {
  const d = await m.detail(id);
  const out = d.lastOutcome?.output;
  if (!out || !d.lastOutcome) return d;
  const head = m.logs(d.id).answerHead(out, RESULT_HEAD_BYTES);
  return {
    ...d,
    result: {
      turnId: d.lastOutcome.turnId,
      text: head.toString("utf8"),
      truncated: out.bytes > RESULT_HEAD_BYTES,
    },
  };
}

const str = (body: Record<string, unknown>, key: string, max = 1024 * 1024): string => {
  const v = body[key];
  if (typeof v !== "string" || v.length === 0 || v.length > max)
    throw new MusterError("invalid_argument", `"${key}" must be a non-empty string`);
  return v;
};

type Route = (m: Muster, params: string[], body: Record<string, unknown>) => Promise<unknown> | unknown;

// Fixed routes: the method and a path pattern whose groups are the ids.
const ROUTES: { method: "GET" | "POST"; path: RegExp; run: Route }[] = [
  { method: "GET", path: /^\/api\/children$/, run: (m) => m.views() },
  { method: "GET", path: /^\/api\/requests$/, run: (m) => m.requests() },
  { method: "GET", path: /^\/api\/children\/([^/]+)$/, run: (m, [id]) => detail(m, id!) },
  {
    method: "GET",
    path: /^\/api\/children\/([^/]+)\/pane$/,
    run: (m, [id]) => m.capture(id!, PANE_LINES),
  },
  {
    method: "GET",
    path: /^\/api\/children\/([^/]+)\/diff$/,
    run: (m, [id]) => m.diff(id!),
  },
  {
    method: "POST",
    path: /^\/api\/children\/([^/]+)\/send$/,
    run: (m, [id], b) => m.send(id!, str(b, "prompt")),
  },
  {
    method: "POST",
    path: /^\/api\/children\/([^/]+)\/cancel$/,
    run: (m, [id]) => m.cancel(id!),
  },
  {
    method: "POST",
    path: /^\/api\/requests\/([^/]+)\/answer$/,
    run: (m, [id], b) => {
      const type = b.type === "permission" || b.type === "question" ? b.type : undefined;
      const r = m.answer(id!, str(b, "text"), type);
      return { answered: r.id, child: r.child };
    },
  },
];

const STATUS: Partial<Record<MusterError["code"], number>> = {
  invalid_argument: 400,
  invalid_id: 400,
  not_found: 404,
  other_primary: 404,
  not_running: 409,
  busy: 409,
  not_resumable: 409,
  limit_reached: 409,
  unsupported: 501,
  unreachable: 502,
};

function decodeId(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new MusterError("invalid_id", "a malformed id in the path");
  }
}

/** Whether a path is an API path at all (anything else is an asset or nothing). */
export const isApi = (pathname: string): boolean => pathname.startsWith("/api/");

/** Runs one API request; undefined when no route has that method and path. */
export async function callApi(
  m: Muster,
  method: string,
  pathname: string,
  body: Record<string, unknown>,
): Promise<Reply | undefined> {
  const route = ROUTES.find((r) => r.method === method && r.path.test(pathname));
  if (!route) {
    const other = ROUTES.some((r) => r.path.test(pathname));
    return other ? { status: 405, body: { error: `${method} is not allowed here` } } : undefined;
  }
  try {
    const params = route.path.exec(pathname)!.slice(1).map(decodeId);
    return { status: 200, body: (await route.run(m, params, body)) ?? {} };
  } catch (e) {
    if (e instanceof MusterError)
      return { status: STATUS[e.code] ?? 500, body: { error: e.message, code: e.code } };
    throw e;
  }
}
