import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defineTuiChecks } from "./tui-checks.js";

// Gemini reads the per-child settings file that carries muster's hooks only when no folder above it is writable
// by group or others: the sandbox (MUSTER_HOME, hence the runner folder) must not be under /tmp (mode 1777).
// A private folder under the user's cache stands in for the temp dir; each sandbox in it is removed after.
const base = path.join(os.homedir(), ".cache", "muster", "test-tmp");
fs.mkdirSync(base, { recursive: true, mode: 0o700 });
fs.chmodSync(base, 0o700);
process.env.TMPDIR = base;

defineTuiChecks("gemini");
