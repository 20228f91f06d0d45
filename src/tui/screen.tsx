import { Box, Transform } from "ink";
import { cellText, cellTextMiddle, textWidth } from "./width.js";

export interface Line {
  text: string;
  sgr?: string | undefined;
  /** Where a line too wide is cut: at its end (default) or in its middle (a path). */
  cut?: "middle" | undefined;
}
const HOME = "\x1b[H";
const ERASE_RIGHT = "\x1b[K";
const ERASE_BELOW = "\x1b[J";
export const SGR = { bold: "1", dim: "2", inverse: "7" };

/**
 * The whole frame as one ink node. Ink measures each text node through a module-level cache that is never
 * emptied, so a screen whose text changes every second (elapsed times, activity) would grow it all day:
 * the node's own text is a blank block of the frame's size (a handful of distinct strings), and the
 * lines, fitted to the width here, are put in by the transform as ink writes them.
 *
 * Each frame paints the whole screen from its top-left corner: every line erases what is right of it and
 * the last erases what is below. Ink erases only the lines it counts as its last frame's, and that count is
 * wrong whenever something else changed the screen (a reflow after a resize, a frame drawn for the old
 * width, a stray write to the terminal): the old rows would stay.
 */
export function Screen({ lines, columns }: { lines: Line[]; columns: number }) {
  const fitted = lines.map((l) => {
    const cut = l.cut === "middle" ? cellTextMiddle(l.text, columns) : cellText(l.text, columns);
    const text = l.sgr === SGR.inverse ? cut : cut.trimEnd();
    // A line that fills the row leaves the cursor on its last cell, which an erase would blank.
    const rest = textWidth(text) < columns ? ERASE_RIGHT : "";
    return `${l.sgr && text ? `\x1b[${l.sgr}m${text}\x1b[0m` : text}${rest}`;
  });
  if (fitted.length > 0) {
    fitted[0] = HOME + fitted[0];
    fitted[fitted.length - 1] += ERASE_BELOW;
  }
  const blank = Array.from(lines, () => " ".repeat(columns)).join("\n");
  return (
    <Box width={columns}>
      <Transform transform={(_, i) => fitted[i] ?? ""}>{blank}</Transform>
    </Box>
  );
}
