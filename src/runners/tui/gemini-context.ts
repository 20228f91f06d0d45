/**
 * Gemini CLI's SessionStart hook that hands it the profile's instructions (`mode: tui`): gemini has no
 * system-prompt flag, but injects a SessionStart hook's `additionalContext` as the first turn of an interactive
 * session. Run as `node gemini-context.js <file>` (a file muster wrote in the child's runner folder); prints the
 * hook's JSON answer, nothing on a resume (the history has it already), and exits 0 whatever happens.
 */
import * as fs from "node:fs";

async function main(): Promise<void> {
  const [file] = process.argv.slice(2);
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  let source: unknown;
  try {
    source = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { source?: unknown }).source;
  } catch {
    source = undefined;
  }
  if (!file || source === "resume") return;
  const text = fs.readFileSync(file, "utf8");
  process.stdout.write(
    JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: text } }),
  );
}

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
