/**
 * Terminal cell widths, enough to keep every line of top within the terminal: East Asian wide characters
 * and emoji take two cells, combining marks, variation selectors and joiners none, everything else one.
 * (top lays out its own lines: ink is handed them already fitted, see app.tsx.)
 */
const ZERO =
  /^[\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u0610-\u061a\u064b-\u065f\u200b-\u200f\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f]$/u;
const WIDE =
  /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]$/u;

export function charWidth(ch: string): number {
  if (ZERO.test(ch)) return 0;
  return WIDE.test(ch) ? 2 : 1;
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
