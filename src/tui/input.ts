/**
 * What top reads from the terminal, as the keys a person pressed. ink hands over one read at a time and
 * names a key only when the read holds that key alone: two Backspaces in one read (a held key, a loaded
 * machine) come as the text "\x7f\x7f". Here every control byte of a read is the key it is, and no control
 * character ever reaches the text that goes into a filter or a prompt.
 */

/** The parts of ink's key that top acts on. */
export interface InkKey {
  upArrow: boolean;
  downArrow: boolean;
  leftArrow: boolean;
  rightArrow: boolean;
  pageUp: boolean;
  pageDown: boolean;
  return: boolean;
  escape: boolean;
  backspace: boolean;
  delete: boolean;
  tab: boolean;
  ctrl: boolean;
  meta: boolean;
}

export type KeyName =
  | "up"
  | "down"
  | "left"
  | "right"
  | "pageup"
  | "pagedown"
  | "return"
  | "escape"
  | "backspace"
  | "tab"
  /** A Ctrl or Alt chord: no command, and never text. */
  | "chord";

/** One key pressed, or a run of printable text (one character typed, or a paste). */
export type Press = ({ key: KeyName; text?: undefined } | { key?: undefined; text: string }) & {
  /** It came in one read with other keys: a confirmation takes only a key pressed on its own. */
  batched: boolean;
};

// Printable text never holds C0 controls, DEL, C1 controls, or bidi embeddings, overrides and isolates.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The presses in one read from the terminal, as ink reported it. */
export function pressesOf(input: string, key: InkKey): Press[] {
  const named = namedKey(key);
  if (named) return [{ key: named, batched: false }];
  if (key.ctrl || key.meta) return [{ key: "chord", batched: false }];
  const out: Omit<Press, "batched">[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") out.push({ text });
    text = "";
  };
  const chars = [...input];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (!CONTROL.test(c)) {
      text += c;
      continue;
    }
    if (c === "\r" || c === "\n" || c === "\t") {
      if (c === "\r" && chars[i + 1] === "\n") i++;
      // A line break or tab with more text after it in the same read is pasted text: one line, a space.
      if (chars.slice(i + 1).some((x) => !CONTROL.test(x))) text += " ";
      else {
        flush();
        out.push({ key: c === "\t" ? "tab" : "return" });
      }
    } else if (c === "\x7f" || c === "\b") {
      flush();
      out.push({ key: "backspace" });
    } else if (c <= "\x1f") {
      flush();
      out.push({ key: "chord" });
    }
    // C1 controls and bidi controls are nothing a person typed: dropped.
  }
  flush();
  const batched = out.length > 1 || (out[0]?.text !== undefined && [...out[0].text].length > 1);
  return out.map((p) => ({ ...p, batched }) as Press);
}

function namedKey(k: InkKey): KeyName | undefined {
  if (k.upArrow) return "up";
  if (k.downArrow) return "down";
  if (k.leftArrow) return "left";
  if (k.rightArrow) return "right";
  if (k.pageUp) return "pageup";
  if (k.pageDown) return "pagedown";
  if (k.return) return "return";
  if (k.escape) return "escape";
  if (k.backspace || k.delete) return "backspace";
  if (k.tab) return "tab";
  return undefined;
}

/**
 * Keys typed before the first frame (they wait in the terminal and come in one read): each character is
 * its own key, still marked batched when it shared the read.
 */
export function typedAhead(ps: Press[]): Press[] {
  return ps.flatMap((p) =>
    p.text !== undefined && [...p.text].length > 1
      ? [...p.text].map((c) => ({ text: c, batched: true }))
      : [p],
  );
}
