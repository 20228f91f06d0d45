import * as fs from "node:fs";
import * as path from "node:path";

/** Where `command` would be found on `PATH` (or itself, when it is a path that exists). */
export function findOnPath(command: string, pathVar: string | undefined): string | undefined {
  const executable = (p: string): boolean => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return executable(command) ? path.resolve(command) : undefined;
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (dir && executable(path.join(dir, command))) return path.join(dir, command);
  }
  return undefined;
}
