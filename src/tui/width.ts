/**
 * Terminal cell widths, enough to keep every line of top within the terminal: East Asian wide characters
 * and emoji take two cells, combining marks, variation selectors and joiners none, everything else one.
 * (top lays out its own lines: ink is handed them already fitted, see app.tsx.)
 */
// [first, last] code points, in order.
const ZERO: [number, number][] = [
  [0x300, 0x36f],
  [0x483, 0x489],
  [0x591, 0x5bd],
  [0x610, 0x61a],
  [0x64b, 0x65f],
  [0x200b, 0x200f],
  [0x20d0, 0x20ff],
  [0xfe00, 0xfe0f],
  [0xfe20, 0xfe2f],
];
const WIDE: [number, number][] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];
const within = (ranges: [number, number][], cp: number): boolean =>
  ranges.some(([a, b]) => cp >= a && cp <= b);

export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  if (within(ZERO, cp)) return 0;
  return within(WIDE, cp) ? 2 : 1;
}

/** Display width of a string in terminal cells. */
export const textWidth = (s: string): number => [...s].reduce((a, c) => a + charWidth(c), 0);

/** Cuts or pads to exactly n cells, marking a cut with "…". */
export function cellText(s: string, n: number): string {
  if (n <= 0) return "";
  const total = textWidth(s);
  if (total <= n) return s + " ".repeat(n - total);
  // Too wide: what fits in n - 1 cells, then "…" (and a space where a wide character did not fit).
  let out = "";
  let used = 0;
  for (const c of s) {
    const w = charWidth(c);
    if (used + w > n - 1) break;
    out += c;
    used += w;
  }
  return `${out}…${" ".repeat(n - 1 - used)}`;
}

/**
 * Cuts or pads to exactly n cells, cutting out of the middle ("…"): for a path, whose end (a child's id)
 * says more than its middle.
 */
export function cellTextMiddle(s: string, n: number): string {
  if (n <= 0) return "";
  if (textWidth(s) <= n) return cellText(s, n);
  const chars = [...s];
  const headCells = Math.floor((n - 1) / 4);
  let head = "";
  let used = 0;
  for (const c of chars) {
    if (used + charWidth(c) > headCells) break;
    head += c;
    used += charWidth(c);
  }
  let tail = "";
  let tailUsed = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = charWidth(chars[i]!);
    if (used + 1 + tailUsed + w > n) break;
    tail = chars[i] + tail;
    tailUsed += w;
  }
  return `${head}…${tail}${" ".repeat(n - used - 1 - tailUsed)}`;
}
