/**
 * A terminal UI drawn where a person watches (a child's TUI in its pane, `muster top`) must draw live even when
 * muster itself was started from a CI job. ink (muster top, Gemini CLI) reads `CI` and `CONTINUOUS_INTEGRATION`
 * when it loads and then draws nothing until it exits; older builds of its check also took any `CI_*`.
 */
const isCiMarker = (key: string): boolean =>
  key === "CI" || key === "CONTINUOUS_INTEGRATION" || key.startsWith("CI_");

/** `env` without the variables that make a terminal UI believe it runs unattended under CI. */
export function interactiveEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !isCiMarker(k)));
}

/**
 * Loads a module with this process's environment set as `changes` says (undefined removes; the CI markers are
 * always removed), then puts the environment back, so nothing started later sees the change. For libraries
 * that read the environment once, when they load (ink's CI check, React's build choice by NODE_ENV).
 */
export async function importWithEnv<T>(
  load: () => Promise<T>,
  changes: Record<string, string | undefined>,
): Promise<T> {
  const keys = [...Object.keys(process.env).filter(isCiMarker), ...Object.keys(changes)];
  const saved = new Map(keys.map((k) => [k, process.env[k]]));
  for (const k of keys) {
    const v = changes[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await load();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
