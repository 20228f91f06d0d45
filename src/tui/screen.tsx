import { Box, Transform } from "ink";
import { cellText, cellTextMiddle } from "./width.js";

export interface Line {
  text: string;
  sgr?: string | undefined;
  /** Where a line too wide is cut: at its end (default) or in its middle (a path). */
  cut?: "middle" | undefined;
}
export const SGR = { bold: "1", dim: "2", inverse: "7" };

/**
 * The whole frame as one ink node. Ink measures each text node through a module-level cache that is never
 * emptied, so a screen whose text changes every second (elapsed times, activity) would grow it all day:
 * the node's own text is a blank block of the frame's size (a handful of distinct strings), and the
 * lines, fitted to the width here, are put in by the transform as ink writes them.
 */
export function Screen({ lines, columns }: { lines: Line[]; columns: number }) {
  const fitted = lines.map((l) => {
    const cut = l.cut === "middle" ? cellTextMiddle(l.text, columns) : cellText(l.text, columns);
    const text = l.sgr === SGR.inverse ? cut : cut.trimEnd();
    return l.sgr && text ? `\x1b[${l.sgr}m${text}\x1b[0m` : text;
  });
  const blank = Array.from(lines, () => " ".repeat(columns)).join("\n");
  return (
    <Box width={columns}>
      <Transform transform={(_, i) => fitted[i] ?? ""}>{blank}</Transform>
    </Box>
  );
}
