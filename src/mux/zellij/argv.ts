/**
 * Pure argv builders for the Zellij CLI (0.44, from its documented `zellij action` commands; see
 * docs/architecture.md: untested against a real Zellij). Each returns the words after the binary.
 */

/** Every action addresses one session explicitly: `--session <s> action …`. */
export function actionArgs(session: string, action: string[]): string[] {
  return ["--session", session, "action", ...action];
}

/** `attach --create-background <s>`: a detached session (outside Zellij); a second call is harmless. */
export function createSessionArgs(session: string): string[] {
  return ["attach", "--create-background", session];
}

export const versionArgs = (): string[] => ["--version"];

const VAR = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The pane's command: Zellij's new-pane has no environment option, so extra variables go through
 * `env -- K=V … argv` (GNU env reads NAME=VALUE words after `--`, then runs the command with execvp).
 */
export function paneCommand(argv: readonly string[], env: Record<string, string> = {}): string[] {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return vars.length === 0 ? [...argv] : ["env", "--", ...vars, ...argv];
}

/** Why a pane command cannot be given to Zellij as argv; null when it can. */
export function paneCommandProblem(argv: readonly string[], env: Record<string, string> = {}): string | null {
  if (argv.length === 0 || argv[0] === "") return "empty argv";
  const bad = Object.keys(env).find((k) => !VAR.test(k));
  if (bad !== undefined) return `invalid environment variable name ${JSON.stringify(bad)}`;
  // After `env --` a first word with `=` would be read as another variable, not the command.
  if (Object.keys(env).length > 0 && argv[0]!.includes("=")) return "the command's first word contains '='";
  return null;
}

export interface NewPaneArgs {
  name: string;
  /** Omitted: the zellij client's own working directory. */
  cwd?: string;
  /** The command (already through paneCommand); after `--`, so no word of it is read as an option. */
  command: readonly string[];
  /** `--direction right`: beside the focused pane (a split); omitted: Zellij picks the biggest space. */
  direction?: "right" | "down";
  floating?: { width: string; height: string };
  /** `--close-on-exit`: the pane goes when its command ends (popups); default: it stays, showing the exit. */
  closeOnExit?: boolean;
}

/** `new-pane [--direction d | --floating --width w --height h] [--close-on-exit] --name n [--cwd d] -- cmd…`. */
export function newPaneArgs(o: NewPaneArgs): string[] {
  const place = o.floating
    ? ["--floating", "--width", o.floating.width, "--height", o.floating.height]
    : o.direction
      ? ["--direction", o.direction]
      : [];
  return [
    "new-pane",
    ...place,
    ...(o.closeOnExit ? ["--close-on-exit"] : []),
    "--name",
    o.name,
    ...(o.cwd === undefined ? [] : ["--cwd", o.cwd]),
    "--",
    ...o.command,
  ];
}

/**
 * `new-tab --name n --cwd d -- cmd…`: a tab whose first pane runs the command (Zellij 0.44 prints the tab's
 * id, not the pane's). A tab is what a tmux window is, and unlike new-pane it exists in a detached session.
 */
export function newTabArgs(o: { name: string; cwd: string; command: readonly string[] }): string[] {
  return ["new-tab", "--name", o.name, "--cwd", o.cwd, "--", ...o.command];
}

/** `current-tab-info --json`: the focused tab (its `position`), to give focus back after new-tab took it. */
export const currentTabInfoArgs = (): string[] => ["current-tab-info", "--json"];

/** `go-to-tab <index>`: Zellij's tab index starts at 1 (a tab's `position` at 0). */
export function goToTabArgs(position: number): string[] {
  return ["go-to-tab", String(position + 1)];
}

export const listPanesArgs = (): string[] => ["list-panes", "--json"];

/** `write-chars --pane-id N -- <text>`: `--` so text starting with `-` is not an option. */
export function writeCharsArgs(paneId: number, text: string): string[] {
  return ["write-chars", "--pane-id", String(paneId), "--", text];
}

/** `write --pane-id N 13`: the Enter key as a byte. */
export function enterArgs(paneId: number): string[] {
  return ["write", "--pane-id", String(paneId), "13"];
}

/** `dump-screen --full --pane-id N`: the pane's whole scrollback on stdout (no file argument). */
export function dumpScreenArgs(paneId: number): string[] {
  return ["dump-screen", "--full", "--pane-id", String(paneId)];
}

export function closePaneArgs(paneId: number): string[] {
  return ["close-pane", "--pane-id", String(paneId)];
}

export function focusPaneArgs(paneId: number): string[] {
  return ["focus-pane-id", String(paneId)];
}

/** What a terminal outside Zellij runs to see a child: attach to its session. */
export function attachArgs(session: string): string[] {
  return ["attach", session];
}
