/**
 * Text a child supplied (its answer, progress, error reason, a profile's description) made safe for a
 * terminal. A child can write anything into its events, so printed raw it could set the window title
 * (OSC 0), clear the screen (ESC[2J) or write the clipboard (OSC 52). Every control character is replaced
 * by a visible stand-in instead of being dropped, so the escape stays inert and nothing is silently hidden:
 * ESC → ␛ (so `ESC]52;c;…` prints as `␛]52;c;…`), other C0 controls → their control pictures (U+2400…),
 * DEL → ␡, C1 controls and bidirectional overrides → `<U+XXXX>`.
 */

// C0 but LF and TAB (kept in multi-line text), DEL, C1 (U+0080–U+009F, 8-bit CSI/OSC/ST), bidi embeddings,
// overrides and isolates (they reorder what follows on screen).
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const standIn = (c: string): string => {
  const code = c.codePointAt(0)!;
  if (code < 0x20) return String.fromCodePoint(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
};

/** Multi-line text safe to print: LF and TAB stay, CRLF becomes LF, every other control is shown, not obeyed. */
export const visible = (s: string): string => s.replace(/\r\n/g, "\n").replace(UNSAFE, standIn);

/** One line safe to print: line breaks and tabs become spaces, every other control is shown, not obeyed. */
export const visibleLine = (s: string): string => visible(s).replace(/[\n\t]/g, " ");
