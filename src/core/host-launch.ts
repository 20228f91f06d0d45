import type { ChildMeta } from "../artifacts/events.js";
import { writeHostEnv } from "../artifacts/host-env.js";
import { MusterError } from "../base/errors.js";
import { ENV } from "../base/settings/resolve.js";
import type { Place } from "../place/place.js";
import { loadProfile } from "../profiles/profile.js";

// Prompts travel as files (inbox/, prompts/), never through a pane or an event record, so this
// only bounds memory; a single argv word is capped by the OS at 128 KiB, larger prompts use --file.
export const MAX_PROMPT_BYTES = 1024 * 1024;
export function checkPrompt(prompt: string): void {
  if (prompt.trim() === "") throw new MusterError("invalid_argument", "the prompt is empty");
  const bytes = Buffer.byteLength(prompt);
  if (bytes > MAX_PROMPT_BYTES) {
    throw new MusterError(
      "invalid_argument",
      `the prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} (put the text in a file and refer to it in the prompt)`,
    );
  }
}

/**
 * The handover file of a resumed child's new host. The first host deleted the spawn's env.json (it may
 * hold secrets) and a pane's own environment is only what tmux gives every pane, so a resume hands over
 * the resuming parent's environment, with the profile's `env` when the profile still loads.
 */
export function handOverForResume(
  envFile: string,
  meta: ChildMeta | undefined,
  parentEnv: NodeJS.ProcessEnv,
  cwd: string,
  place: Pick<Place, "handover">,
): void {
  const env = Object.fromEntries(
    Object.entries(parentEnv).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  let named: string[] = [];
  if (meta) {
    try {
      const profileEnv = loadProfile(meta.agent, cwd, parentEnv).env ?? {};
      Object.assign(env, profileEnv);
      named = Object.keys(profileEnv);
    } catch {
      // The profile is gone or broken now: the child continues with the parent's environment.
    }
    if (meta.envNames.includes(ENV.noSpawn)) env[ENV.noSpawn] = "1";
  }
  const handed = place.handover?.(env, named);
  writeHostEnv(envFile, handed ? { env: handed, inherit: true } : { env });
}
