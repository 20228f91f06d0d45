/** Reading a TUI's screen text (only for what hooks cannot say: a dialog in the way, a draft not yet submitted). */

const RULE = /^[─━]{10,}$/;

/**
 * The text in the input box: Claude Code and Pi both draw it between two horizontal rules near the bottom
 * (Claude with a `❯` in front); the last such pair on screen is the box.
 */
export function inputBoxText(screen: string): string {
  const lines = screen.split("\n").map((l) => l.trim());
  const rules = lines.flatMap((l, i) => (RULE.test(l) ? [i] : []));
  for (let k = rules.length - 1; k > 0; k--) {
    const inside = lines.slice(rules[k - 1]! + 1, rules[k]);
    // A pair of rules with a dialog's many lines between them is not the box: it is a few lines at most.
    if (inside.length > 12) continue;
    return inside.join("\n").replace(/^❯\s?/, "").trim();
  }
  return "";
}
