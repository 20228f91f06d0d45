import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import matter from "gray-matter";
import { MusterError } from "../core/errors.js";
import type { StreamProtocol } from "../runners/types.js";
import { PACKAGE_ROOT } from "../util/pkg.js";

/** An agent definition: Markdown body (system prompt) + YAML frontmatter. */
export interface Profile {
  name: string;
  description: string;
  runner: string;
  model?: string;
  reasoning?: string;
  command?: string[];
  protocol?: StreamProtocol;
  systemPrompt: string;
  /** The file it came from. */
  source: string;
  warnings: string[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function assertProfileName(name: string): string {
  if (!NAME.test(name)) {
    throw new MusterError(
      "usage",
      `invalid agent name ${JSON.stringify(name)}: use letters, digits, ".", "_" or "-"`,
    );
  }
  return name;
}

/** Profile folders, highest precedence first: project, user, bundled. */
export function profileDirs(cwd: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const config = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return [
    path.join(cwd, ".muster", "agents"),
    path.join(config, "muster", "agents"),
    path.join(PACKAGE_ROOT, "agents"),
  ];
}

/** Parses one profile file; a bad field value is a warning naming the file and field, never a failure. */
export function parseProfile(file: string, text: string): Profile {
  let parsed: { data: Record<string, unknown>; content: string };
  try {
    parsed = matter(text);
  } catch (e) {
    throw new MusterError(
      "usage",
      `cannot read agent profile ${file}: bad frontmatter (${(e as Error).message.split("\n")[0]})`,
      { cause: e },
    );
  }
  const { data, content } = parsed;
  const warnings: string[] = [];
  const str = (key: string): string | undefined => {
    const v = data[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string" && v.trim() !== "") return v.trim();
    warnings.push(`${file}: field "${key}" must be a non-empty string; ignored`);
    return undefined;
  };
  const stem = path.basename(file, ".md");
  const profile: Profile = {
    name: str("name") ?? stem,
    description: str("description") ?? "",
    runner: str("runner") ?? "mock",
    systemPrompt: content.trim(),
    source: file,
    warnings,
  };
  const model = str("model");
  if (model) profile.model = model;
  const reasoning = str("reasoning");
  if (reasoning) profile.reasoning = reasoning;
  if (data.command !== undefined) {
    if (
      Array.isArray(data.command) &&
      data.command.length > 0 &&
      data.command.every((w) => typeof w === "string")
    ) {
      profile.command = data.command as string[];
    } else warnings.push(`${file}: field "command" must be a non-empty list of strings; ignored`);
  }
  const protocol = str("protocol");
  if (protocol === "text" || protocol === "muster-jsonl") profile.protocol = protocol;
  else if (protocol) warnings.push(`${file}: field "protocol" must be "text" or "muster-jsonl"; ignored`);
  return profile;
}

/** Finds a profile by name: the first folder (project, user, bundled) that has `<name>.md` wins. */
export function loadProfile(name: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Profile {
  assertProfileName(name);
  for (const dir of profileDirs(cwd, env)) {
    const file = path.join(dir, `${name}.md`);
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch {
      continue;
    }
    return parseProfile(file, text);
  }
  throw new MusterError(
    "not_found",
    `unknown agent "${name}": no ${name}.md in ${profileDirs(cwd, env).join(", ")}`,
  );
}

/** All bundled profile names (for help and errors). */
export function bundledProfileNames(): string[] {
  try {
    return fs
      .readdirSync(path.join(PACKAGE_ROOT, "agents"))
      .filter((n) => n.endsWith(".md"))
      .map((n) => n.slice(0, -3))
      .sort();
  } catch {
    return [];
  }
}
