/** Text flattened to one line (whitespace runs → one space), cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max = 160): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Shell-quotes argv for display only (never executed through a shell by muster). */
export const shellQuote = (argv: string[]): string =>
  argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ");
