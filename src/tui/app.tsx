import { useApp, useInput, useStdout } from "ink";
import { useEffect, useMemo, useRef, useState } from "react";
import { shortId } from "../util/ids.js";
import { type Detail, failure, type TopActions } from "./actions.js";
import { type Press, pressesOf, typedAhead } from "./input.js";
import { clockText, footerLine, headerLine, helpLines, hostsLine, rowLine } from "./layout.js";
import { type Line, Screen, SGR } from "./screen.js";
import type { Snapshot, TopSource } from "./source.js";
import { buildTree, type TreeRow, windowRows } from "./tree.js";

export interface TopProps {
  source: Pick<TopSource, "start" | "refresh" | "due" | "frameMs" | "idleClockMs">;
  actions: TopActions;
  /** Fixed terminal size (tests); default: the terminal's, following resizes. */
  size?: { columns: number; rows: number };
}

type Mode =
  | { kind: "normal" }
  | { kind: "filter"; text: string }
  | { kind: "send"; id: string; text: string }
  | { kind: "confirm"; id: string; question: string; subtree: boolean };

const CLEAR = "\x1b[2J\x1b[H";
/** Past a frame (ink draws at most every 100 ms): the frame for the new size is drawn by then. */
const REDRAW_MS = 150;

/**
 * The terminal's size, read at every render (ink redraws on a resize before any state of ours could change:
 * a frame laid out for the old width would wrap), with a re-render of our own on resize as well. A terminal
 * that changes size reflows what is on it, and ink's count of the lines it drew is then wrong: once the
 * frame for the new size is drawn, the screen is cleared and that frame drawn whole (ink's write puts its
 * last frame back after what it writes).
 */
function useSize(fixed: TopProps["size"]): { columns: number; rows: number } {
  const { stdout, write } = useStdout();
  const [, setResized] = useState(0);
  useEffect(() => {
    if (fixed) return;
    let timer: NodeJS.Timeout | undefined;
    const on = () => {
      setResized((n) => n + 1);
      clearTimeout(timer);
      timer = setTimeout(() => write(CLEAR), REDRAW_MS);
    };
    stdout.on("resize", on);
    return () => {
      clearTimeout(timer);
      stdout.off("resize", on);
    };
  }, [fixed, stdout, write]);
  return fixed ?? { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}

const childOf = (row: TreeRow | undefined): string | undefined =>
  row?.kind === "child" ? row.child.id : row?.kind === "step" ? row.step.childId : undefined;

/** The supervisor: a live tree of the primary's children and workflow runs, with keys to act on them. */
export function Top({ source, actions, size: fixed }: TopProps) {
  const { exit } = useApp();
  const { columns, rows: height } = useSize(fixed);
  const [snap, setSnap] = useState<Snapshot | undefined>();
  const [selKey, setSelKey] = useState<string | undefined>();
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [showSettled, setShowSettled] = useState(false);
  const [filter, setFilter] = useState("");
  const [mode, setMode] = useState<Mode>({ kind: "normal" });
  const [panel, setPanel] = useState<{ title: string; lines: string[] } | undefined>();
  const [message, setMessage] = useState("");
  const [clock, setClock] = useState(Date.now());
  const start = useRef(0);

  useEffect(() => {
    source.start(setSnap).catch((e) => setMessage(`cannot watch: ${failure(e)}`));
  }, [source]);

  // The clock: while a turn runs, elapsed times move every frame (a snapshot redraws with its own time, so
  // the clock only fills gaps between them); an idle tree shows minutes and is looked at every 30 s, and
  // redrawn only when a shown time reads differently (a frame costs ink tens of ms; most ticks change none).
  const active = snap?.children.some((c) => c.active) ?? false;
  const snapAt = useRef(0);
  snapAt.current = snap?.at ?? 0;
  const shownTimes = useRef<{ at: number; text: (t: number) => string }>({ at: 0, text: () => "" });
  useEffect(() => {
    const t = setInterval(
      () => {
        const n = Date.now();
        const shown = shownTimes.current;
        if (source.due(n)) void source.refresh(true);
        else if (active ? n - snapAt.current >= source.frameMs() : shown.text(n) !== shown.text(shown.at))
          setClock(n);
      },
      active ? source.frameMs() : source.idleClockMs(),
    );
    return () => clearInterval(t);
  }, [active, source]);
  const now = Math.max(clock, snap?.at ?? 0);

  const { rows, hidden } = useMemo(
    () => buildTree(snap?.children ?? [], snap?.runs ?? [], { showSettled, filter }),
    [snap, showSettled, filter],
  );
  // The selection is a row's key, never a position: when its row leaves the tree (its child settled and
  // is hidden, a filter) nothing is selected rather than whatever row moved into its place.
  const sel = selKey === undefined ? (rows.length > 0 ? 0 : -1) : rows.findIndex((r) => r.key === selKey);
  const lastSel = useRef(0);
  if (sel >= 0) lastSel.current = sel;
  const selected = sel >= 0 ? rows[sel] : undefined;
  const selChild = childOf(selected);
  useEffect(() => {
    if (selKey === undefined && rows[0]) setSelKey(rows[0].key);
  }, [selKey, rows]);

  // The expanded row's details read its files: once per snapshot, not once per frame.
  const selKeyNow = selected?.key;
  const selDetails = useMemo((): Detail[] => {
    void snap; // re-read when a new snapshot arrives
    if (!selKeyNow || !expanded.has(selKeyNow) || !selChild) return [];
    const view = snap?.views.find((v) => v.id === selChild);
    if (!view) return [{ text: `child ${shortId(selChild)} is not in this primary's list` }];
    try {
      return actions.details(view).slice(0, 12);
    } catch (e) {
      return [{ text: failure(e) }];
    }
  }, [snap, selKeyNow, selChild, expanded, actions]);
  const panelLines = panel ? panel.lines.slice(-Math.max(3, Math.floor(height / 2) - 1)) : [];
  // A short terminal keeps its rows for the tree: one line of key help, else as many as it takes (two).
  const help = helpLines(columns, height < 12 ? 1 : 2);
  // Title, header, footer, the message/input line and the key help are always there; the rest is the tree.
  const chrome = 4 + help.length;
  const treeHeight = Math.max(1, height - chrome - selDetails.length - (panel ? panelLines.length + 1 : 0));
  const win = windowRows(
    rows.length,
    Math.min(sel >= 0 ? sel : lastSel.current, rows.length - 1),
    treeHeight,
    start.current,
  );
  start.current = win.start;
  const shownRows = rows.slice(win.start, win.end);
  shownTimes.current = { at: now, text: (t) => clockText(shownRows, t) };

  const run = (what: string, p: Promise<string>) => {
    setMessage(`${what}…`);
    p.then(setMessage, (e) => setMessage(`${what} failed: ${failure(e)}`)).finally(() =>
      source.refresh(true),
    );
  };
  // With nothing selected, j selects the row that took the vanished one's place, k the one above it.
  const move = (d: number) => {
    if (rows.length === 0) return;
    const from = sel >= 0 ? sel : d > 0 ? lastSel.current - 1 : lastSel.current;
    setSelKey(rows[Math.max(0, Math.min(rows.length - 1, from + d))]!.key);
  };
  const needChild = (f: (id: string) => void) => () => {
    if (selChild) f(selChild);
    else setMessage("select a child first");
  };
  const viewOf = (id: string) => snap?.children.find((c) => c.id === id);
  // A child as its row calls it (its name, else its short id): every message names it the same way.
  const called = (id: string) => viewOf(id)?.label ?? shortId(id);

  const keys: Record<string, () => void> = {
    j: () => move(1),
    k: () => move(-1),
    l: () => selected && setExpanded(new Set(expanded).add(selected.key)),
    h: () => {
      if (!selected) return;
      const s = new Set(expanded);
      s.delete(selected.key);
      setExpanded(s);
    },
    v: needChild((id) => {
      setMessage(`capturing ${called(id)}…`);
      actions.capture(id, Math.max(10, height)).then(
        (text) => {
          setPanel({ title: `pane of ${called(id)} (Esc closes)`, lines: text.split("\n") });
          setMessage("");
        },
        (e) => setMessage(`capture failed: ${failure(e)}`),
      );
    }),
    f: needChild((id) => {
      actions.focus(id).then(setMessage, () => {
        try {
          setMessage(`not inside tmux with it; ${actions.attach(id)}`);
        } catch (e) {
          setMessage(failure(e));
        }
      });
    }),
    a: needChild((id) => {
      try {
        setMessage(actions.attach(id));
      } catch (e) {
        setMessage(failure(e));
      }
    }),
    s: needChild((id) => setMode({ kind: "send", id, text: "" })),
    // A live child is asked about first: the row under the cursor is not always the one a person meant.
    x: needChild((id) => {
      const c = viewOf(id);
      if (c?.settled) return run(`cancelling ${called(id)}`, actions.cancel(id));
      const name = c && c.label !== shortId(id) ? ` (${c.label})` : "";
      const question = `cancel ${shortId(id)}${name}, ${c?.state ?? "running"}? y/N`;
      setMode({ kind: "confirm", id, question, subtree: false });
    }),
    X: needChild((id) => {
      try {
        const count = actions.subtreeSize(id);
        const question = `cancel ${count} child(ren) under ${called(id)}, deepest first? y/N`;
        setMode({ kind: "confirm", id, question, subtree: true });
      } catch (e) {
        setMessage(failure(e));
      }
    }),
    "/": () => setMode({ kind: "filter", text: filter }),
    r: () => {
      setMessage("refreshed");
      void source.refresh(true);
    },
    H: () => setShowSettled((v) => !v),
    q: () => exit(),
  };

  const onPress = (p: Press) => {
    if (mode.kind === "confirm") {
      // Only a y pressed on its own says yes: one in a burst of keys (a paste, type-ahead) was not an answer.
      if (p.text !== undefined && /^[yY]$/.test(p.text) && !p.batched) {
        if (mode.subtree) run(`cancelling the subtree of ${called(mode.id)}`, actions.cancelTree(mode.id));
        else run(`cancelling ${called(mode.id)}`, actions.cancel(mode.id));
      } else setMessage(mode.subtree ? "subtree cancel aborted" : "cancel aborted");
      setMode({ kind: "normal" });
      return;
    }
    if (mode.kind === "filter" || mode.kind === "send") {
      if (p.key === "escape") {
        if (mode.kind === "filter") setFilter("");
        setMode({ kind: "normal" });
      } else if (p.key === "return") {
        if (mode.kind === "filter") setFilter(mode.text.trim());
        else if (mode.text.trim() !== "")
          run(`sending to ${called(mode.id)}`, actions.send(mode.id, mode.text));
        setMode({ kind: "normal" });
      } else if (p.key === "backspace") {
        setMode({ ...mode, text: [...mode.text].slice(0, -1).join("") });
      } else if (p.text !== undefined) {
        setMode({ ...mode, text: mode.text + p.text });
      }
      return;
    }
    switch (p.key) {
      case "up":
        return move(-1);
      case "down":
        return move(1);
      case "pagedown":
        return move(treeHeight);
      case "pageup":
        return move(-treeHeight);
      case "right":
        return keys.l!();
      case "left":
        return keys.h!();
      case "return":
        if (selected && expanded.has(selected.key)) return keys.h!();
        return keys.l!();
      case "escape":
        if (panel) return setPanel(undefined);
        if (filter) return setFilter("");
        return exit();
    }
    if (p.text === undefined) return;
    // One key is a command; a run of j/k (a held key) moves as far; other runs of text (a paste) are none.
    if ([...p.text].length === 1) keys[p.text]?.();
    else if (/^[jk]+$/.test(p.text)) move([...p.text].reduce((n, c) => n + (c === "j" ? 1 : -1), 0));
  };

  // Every press is handled by the latest render, one press a render (what a key changes is seen by the
  // next one: "s", text and Enter in one read send that text). Until the first snapshot shows there are
  // no rows to act on: what is typed waits, and is applied once they are there. q and Esc quit at once.
  const pending = useRef<Press[]>([]);
  const [presses, setPresses] = useState(0);
  const handle = useRef<(p: Press) => void>(() => {});
  handle.current = onPress;
  const ready = snap !== undefined;
  const readyRef = useRef(ready);
  readyRef.current = ready;
  useInput((input, key) => {
    const ps = pressesOf(input, key);
    if (!readyRef.current && ps.some((p) => p.key === "escape" || p.text === "q")) return exit();
    pending.current.push(...(readyRef.current ? ps : typedAhead(ps)));
    setPresses((n) => n + 1);
  });
  useEffect(() => {
    void presses;
    if (!ready) return;
    const p = pending.current.shift();
    if (!p) return;
    handle.current(p);
    if (pending.current.length > 0) setPresses((n) => n + 1);
  }, [presses, ready]);

  const title = `muster top · primary ${snap ? shortId(snap.primary) : "…"}${filter ? ` · filter "${filter}"` : ""}${showSettled ? " · showing settled" : ""}`;
  const totals = {
    children: snap?.children.length ?? 0,
    active: snap?.children.filter((c) => c.active).length ?? 0,
    tokens: snap?.children.reduce((n, c) => n + (c.tokens ?? 0), 0) ?? 0,
    cost: snap?.children.some((c) => c.cost !== null)
      ? snap.children.reduce((n, c) => n + (c.cost ?? 0), 0)
      : null,
  };
  const bottom =
    mode.kind === "filter"
      ? `filter: ${mode.text}▏ (Enter applies, Esc clears)`
      : mode.kind === "send"
        ? `send to ${called(mode.id)}: ${mode.text}▏ (Enter sends, Esc aborts)`
        : mode.kind === "confirm"
          ? mode.question
          : message;
  const hosts = hostsLine(snap?.children ?? []);
  const frame: Line[] = [
    { text: title, sgr: SGR.bold },
    { text: headerLine(columns, hosts !== ""), sgr: SGR.dim },
    ...(!snap
      ? [{ text: "loading…" }]
      : rows.length === 0
        ? [{ text: "no children to show", sgr: SGR.dim }]
        : []),
    ...shownRows.flatMap((r, i): Line[] => {
      const isSel = win.start + i === sel;
      return [
        {
          text: rowLine(r, columns, now, hosts !== ""),
          sgr: isSel ? SGR.inverse : r.context ? SGR.dim : undefined,
        },
        ...(isSel ? selDetails.map((d) => ({ text: `    ${d.text}`, sgr: SGR.dim, cut: d.cut })) : []),
      ];
    }),
    ...(panel ? [{ text: `── ${panel.title} ${"─".repeat(columns)}`, sgr: SGR.dim }] : []),
    ...panelLines.map((l) => ({ text: l })),
    { text: footerLine(totals, snap?.budget ?? "-", { ...hidden, cut: win.cut }), sgr: SGR.dim },
    ...(hosts ? [{ text: hosts, sgr: SGR.dim }] : []),
    { text: bottom },
    ...help.map((text) => ({ text, sgr: SGR.dim })),
  ];
  return <Screen lines={frame} columns={columns} />;
}
