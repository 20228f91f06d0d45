import * as path from "node:path";
import { mapCompat } from "./compat.js";
import { FieldReader, readFrontmatter } from "./fields.js";
import type { Profile, ProfileFormat } from "./types.js";

/**
 * Parses one profile file. Bad field values are warnings naming the file and field (the rest still works);
 * only broken frontmatter throws (MusterError "invalid_config"). `format` picks the dialect: muster's own fields, or
 * a foreign harness's (Claude Code, Pi, OpenCode) mapped to ours.
 */
export function parseProfile(file: string, text: string, format: ProfileFormat = "muster"): Profile {
  const { data, body } = readFrontmatter(file, text);
  const warnings: string[] = [];
  const r = new FieldReader(file, data, warnings);
  const profile: Profile = {
    name: r.str("name") ?? path.basename(file, ".md"),
    description: r.str("description") ?? "",
    runner: "mock",
    systemPrompt: body.trim(),
    source: file,
    warnings,
  };
  if (format !== "muster") {
    profile.format = format;
    Object.assign(profile, mapCompat(format, r));
    return profile;
  }
  const fields: Partial<Profile> = {
    runner: r.str("runner"),
    model: r.model("model"),
    reasoning: r.reasoning("reasoning"),
    tools: r.list("tools"),
    mode: r.oneOf("mode", ["headless", "session", "oneshot", "tui"] as const),
    isolation: r.oneOf("isolation", ["none", "worktree"] as const),
    on: r.list("on"),
    container: r.container("container"),
    k8s: r.k8s("k8s"),
    cwd: r.str("cwd"),
    env: r.env("env"),
    maxTurns: r.positiveInt("maxTurns"),
    permissions: r.oneOf("permissions", ["allow", "ask"] as const),
    caps: r.caps("caps"),
    restart: r.restart("restart"),
    spawn: r.bool("spawn"),
    command: r.argv("command"),
    protocol: r.oneOf("protocol", ["text", "muster-jsonl"] as const),
    acpMode: r.str("acpMode"),
    verify: r.verify("verify"),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(profile, { [k]: v });
  return profile;
}
