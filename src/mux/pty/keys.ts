/** The attach client's detach key, from MUSTER_DETACH_KEY. */

/** The detach key as one byte: `^X` / `C-x` (a control key) or a single character; Ctrl-\ by default. */
export function detachByte(spec: string | undefined): number {
  const s = (spec ?? "").trim();
  if (s === "") return 0x1c;
  const m = /^(?:\^|C-)(.)$/i.exec(s);
  if (m) return m[1]!.toUpperCase().charCodeAt(0) & 0x1f;
  if (s.length === 1) return s.charCodeAt(0);
  throw new Error(`MUSTER_DETACH_KEY: ${JSON.stringify(s)} is not a key like ^\\ or C-]`);
}
