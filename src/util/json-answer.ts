/** The one JSON value in an agent's answer, as structured workflow steps and a best-of judge read it. */

/**
 * The JSON value in an answer: the last ```json (or bare ```) fenced block that parses, else the whole answer
 * trimmed, else the last line-starting `{`/`[` from which the rest of the answer parses.
 */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const tryParse = (s: string): { ok: true; value: unknown } | undefined => {
    try {
      return { ok: true, value: JSON.parse(s) };
    } catch {
      return undefined;
    }
  };
  const fences = [...text.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)\n[ \t]*```/g)].map((m) => m[1]!);
  for (const f of fences.reverse()) {
    const v = tryParse(f.trim());
    if (v) return v;
  }
  const whole = tryParse(text.trim());
  if (whole) return whole;
  const starts = [...text.matchAll(/^[ \t]*[[{]/gm)].map((m) => m.index!);
  for (const i of starts.reverse()) {
    const v = tryParse(text.slice(i).trim());
    if (v) return v;
  }
  return { ok: false, error: "the answer holds no JSON value (expected a ```json fenced block)" };
}
