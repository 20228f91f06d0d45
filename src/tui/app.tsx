import { Box, type Key, Transform, useApp, useInput, useStdout } from "ink";
import { useEffect, useMemo, useRef, useState } from "react";
import { shortId } from "../util/ids.js";
import { failure, type TopActions } from "./actions.js";
import { clockText, footerLine, headerLine, rowLine } from "./layout.js";
import type { Snapshot, TopSource } from "./source.js";
import { buildTree, type TreeRow, windowRows } from "./tree.js";
import { cellText } from "./width.js";

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
  | { kind: "confirm"; id: string; count: number };

/**
 * The terminal's size, read at every render (ink redraws on a resize before any state of ours could change:
 * a frame laid out for the old width would wrap), with a re-render of our own on resize as well.
 */
function useSize(fixed: TopProps["size"]): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const [, setResized] = useState(0);
  useEffect(() => {
    if (fixed) return;
    const on = () => setResized((n) => n + 1);
    stdout.on("resize", on);
    return () => {
      stdout.off("resize", on);
    };
  }, [fixed, stdout]);
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
  const found = rows.findIndex((r) => r.key === selKey);
  const sel = found >= 0 ? found : Math.min(rows.length - 1, 0);
  const selected = rows[sel];
  const selChild = childOf(selected);

  // The expanded row's details read its files: once per snapshot, not once per frame.
  const selKeyNow = selected?.key;
  const selDetails = useMemo(() => {
    void snap; // re-read when a new snapshot arrives
    if (!selKeyNow || !expanded.has(selKeyNow) || !selChild) return [];
    try {
      return actions.details(selChild).slice(0, 12);
    } catch (e) {
      return [failure(e)];
    }
  }, [snap, selKeyNow, selChild, expanded, actions]);
  const panelLines = panel ? panel.lines.slice(-Math.max(3, Math.floor(height / 2) - 1)) : [];
  // Title, header, footer and the message/input line are always there; the rest is the tree.
  const treeHeight = Math.max(1, height - 4 - selDetails.length - (panel ? panelLines.length + 1 : 0));
  const win = windowRows(rows.length, Math.max(0, sel), treeHeight, start.current);
  start.current = win.start;
  const shownRows = rows.slice(win.start, win.end);
  shownTimes.current = { at: now, text: (t) => clockText(shownRows, t) };

  const run = (what: string, p: Promise<string>) => {
    setMessage(`${what}…`);
    p.then(setMessage, (e) => setMessage(`${what} failed: ${failure(e)}`)).finally(() =>
      source.refresh(true),
    );
  };
  // Functional updates: two keys may arrive before the next render.
  const move = (d: number) =>
    setSelKey((prev) => {
      const at = rows.findIndex((r) => r.key === prev);
      return rows[Math.max(0, Math.min(rows.length - 1, (at >= 0 ? at : sel) + d))]?.key ?? prev;
    });
  const needChild = (f: (id: string) => void) => () => {
    if (selChild) f(selChild);
    else setMessage("select a child first");
  };

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
      setMessage(`capturing ${shortId(id)}…`);
      actions.capture(id, Math.max(10, height)).then(
        (text) => {
          setPanel({ title: `pane of ${shortId(id)} (Esc closes)`, lines: text.split("\n") });
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
    x: needChild((id) => run(`cancelling ${shortId(id)}`, actions.cancel(id))),
    X: needChild((id) => {
      try {
        setMode({ kind: "confirm", id, count: actions.subtreeSize(id) });
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

  // The handler of the latest render, read through a ref: a key that arrives before React has re-subscribed
  // the input hook must not act on the state of an older render.
  const onKey = useRef<(input: string, key: Key) => void>(() => {});
  useInput((input, key) => onKey.current(input, key));
  onKey.current = (input, key) => {
    if (mode.kind === "confirm") {
      if (input === "y" || input === "Y")
        run(`cancelling the subtree of ${shortId(mode.id)}`, actions.cancelTree(mode.id));
      else setMessage("subtree cancel aborted");
      setMode({ kind: "normal" });
      return;
    }
    if (mode.kind === "filter" || mode.kind === "send") {
      if (key.escape) {
        if (mode.kind === "filter") setFilter("");
        setMode({ kind: "normal" });
      } else if (key.return) {
        if (mode.kind === "filter") setFilter(mode.text.trim());
        else if (mode.text.trim() !== "")
          run(`sending to ${shortId(mode.id)}`, actions.send(mode.id, mode.text));
        setMode({ kind: "normal" });
      } else if (key.backspace || key.delete) {
        setMode((m) => ("text" in m ? { ...m, text: [...m.text].slice(0, -1).join("") } : m));
      } else if (input && !key.ctrl && !key.meta) {
        // One line: pasted line breaks become spaces.
        const add = input.replace(/[\r\n]+/g, " ");
        setMode((m) => ("text" in m ? { ...m, text: m.text + add } : m));
      }
      return;
    }
    if (key.upArrow) return move(-1);
    if (key.downArrow) return move(1);
    if (key.pageDown) return move(treeHeight);
    if (key.pageUp) return move(-treeHeight);
    if (key.rightArrow) return keys.l!();
    if (key.leftArrow) return keys.h!();
    if (key.return) {
      if (selected && expanded.has(selected.key)) return keys.h!();
      return keys.l!();
    }
    if (key.escape) {
      if (panel) return setPanel(undefined);
      if (filter) return setFilter("");
      return exit();
    }
    // A key and Enter may arrive together; other runs of text (a paste) are no command.
    const one = input.replace(/[\r\n]+$/, "");
    if ([...one].length === 1) keys[one]?.();
    else if (one === "" && input !== "") keys.l!();
  };

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
        ? `send to ${shortId(mode.id)}: ${mode.text}▏ (Enter sends, Esc aborts)`
        : mode.kind === "confirm"
          ? `cancel ${mode.count} child(ren) under ${shortId(mode.id)}, deepest first? y/N`
          : message ||
            "↑↓ select · ⏎ expand · v pane · f focus · a attach · s send · x cancel · X subtree · / filter · H settled · q quit";
  const frame: Line[] = [
    { text: title, sgr: SGR.bold },
    { text: headerLine(columns), sgr: SGR.dim },
    ...(!snap
      ? [{ text: "loading…" }]
      : rows.length === 0
        ? [{ text: "no children to show", sgr: SGR.dim }]
        : []),
    ...rows.slice(win.start, win.end).flatMap((r, i): Line[] => {
      const isSel = win.start + i === sel;
      return [
        { text: rowLine(r, columns, now), sgr: isSel ? SGR.inverse : r.context ? SGR.dim : undefined },
        ...(isSel ? selDetails.map((d) => ({ text: `    ${d}`, sgr: SGR.dim })) : []),
      ];
    }),
    ...(panel ? [{ text: `── ${panel.title} ${"─".repeat(columns)}`, sgr: SGR.dim }] : []),
    ...panelLines.map((l) => ({ text: l })),
    { text: footerLine(totals, snap?.budget ?? "-", { ...hidden, cut: win.cut }), sgr: SGR.dim },
    { text: bottom },
  ];
  return <Screen lines={frame} columns={columns} />;
}

interface Line {
  text: string;
  sgr?: string | undefined;
}
const SGR = { bold: "1", dim: "2", inverse: "7" };

/**
 * The whole frame as one ink node. Ink measures each text node through a module-level cache that is never
 * emptied, so a screen whose text changes every second (elapsed times, activity) would grow it all day:
 * the node's own text is a blank block of the frame's size (a handful of distinct strings), and the
 * lines, fitted to the width here, are put in by the transform as ink writes them.
 */
function Screen({ lines, columns }: { lines: Line[]; columns: number }) {
  const fitted = lines.map((l) => {
    const text = l.sgr === SGR.inverse ? cellText(l.text, columns) : cellText(l.text, columns).trimEnd();
    return l.sgr && text ? `\x1b[${l.sgr}m${text}\x1b[0m` : text;
  });
  const blank = Array.from(lines, () => " ".repeat(columns)).join("\n");
  return (
    <Box width={columns}>
      <Transform transform={(_, i) => fitted[i] ?? ""}>{blank}</Transform>
    </Box>
  );
}
