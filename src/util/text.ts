/** Text flattened to one line (whitespace runs → one space), cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max = 160): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * The one quoting of argv for a POSIX shell that will run it (a CLI's hook `command`): every word is
 * single-quoted, so nothing in it — spaces, quotes, `$`, backticks, newlines, a leading `NAME=` — is read as
 * shell syntax, and the shell hands the words back as they were.
 */
export const shellWords = (argv: string[]): string =>
  argv.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ");

/** Shell-quotes argv for display only (never executed through a shell by muster). */
export const shellQuote = (argv: string[]): string =>
  argv.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ");
