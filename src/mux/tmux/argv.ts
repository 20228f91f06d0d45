/** Pure argv builders for tmux commands: each returns the words AFTER the server flags. */
import type { TmuxPaneRef as PaneRef } from "../backend.js";

export type ServerRef = PaneRef["server"];

/** tmux refuses a command whose packed argv exceeds its 16 KiB message size ("command too long"). */
export const TMUX_MAX_COMMAND_BYTES = 16_000;

/** Server selection flags: `[]` (default server), `["-L", name]` or `["-S", path]`. */
export function serverArgs(server: ServerRef): string[] {
  return server ? [server.flag, server.value] : [];
}

/** tmux ends a command at any argv word ending in `;`; `\;` keeps it literal (and `x\;` stays `x\;`). */
export function escapeWord(word: string): string {
  return word.endsWith(";") ? `${word.slice(0, -1)}\\;` : word;
}

/** `-c` and `-n` values are format-expanded by tmux: `##` keeps a literal `#`. */
export function escapeFormat(s: string): string {
  return escapeWord(s.replaceAll("#", "##"));
}

/**
 * The words of a pane command: tmux runs ONE word through `$SHELL -c`, several words via execvp,
 * so a single word is wrapped in `env --` to keep it literal.
 */
export function commandWords(argv: readonly string[]): string[] {
  const words = argv.length === 1 ? ["env", "--", argv[0]!] : [...argv];
  return words.map(escapeWord);
}

/** Joins tmux commands into one invocation with `;` as its own argv word. */
export function chain(...commands: string[][]): string[] {
  return commands.flatMap((c, i) => (i === 0 ? c : [";", ...c]));
}

/** Bytes tmux needs to pack these words (each NUL-terminated). */
export function commandBytes(args: readonly string[]): number {
  return args.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0);
}

function envArgs(env: Record<string, string> | undefined): string[] {
  return Object.entries(env ?? {}).flatMap(([k, v]) => ["-e", escapeWord(`${k}=${v}`)]);
}

function commandTail(argv: readonly string[] | undefined): string[] {
  return argv && argv.length > 0 ? ["--", ...commandWords(argv)] : [];
}

export interface NewSessionArgs {
  name: string;
  windowName?: string;
  width?: number;
  height?: number;
  argv?: readonly string[];
}

/** `new-session -d -s name [-n win] -x 200 -y 50 [-- argv…]`. */
export function newSessionArgs(o: NewSessionArgs): string[] {
  const win = o.windowName === undefined ? [] : ["-n", escapeFormat(o.windowName)];
  const size = ["-x", String(o.width ?? 200), "-y", String(o.height ?? 50)];
  return ["new-session", "-d", "-s", escapeWord(o.name), ...win, ...size, ...commandTail(o.argv)];
}

/** `has-session -t =name` (`=` forces an exact match; plain `-t` matches a prefix). */
export function hasSessionArgs(name: string): string[] {
  return ["has-session", "-t", escapeWord(`=${name}`)];
}

export interface PaneCommandArgs {
  target: string;
  cwd?: string;
  env?: Record<string, string>;
  argv?: readonly string[];
  detached?: boolean;
  /** `-P -F format`: print this format for the new pane. */
  format?: string;
}

function paneCommandFlags(o: PaneCommandArgs, extra: string[] = []): string[] {
  const out = o.detached === false ? [...extra] : ["-d", ...extra];
  if (o.format !== undefined) out.push("-P", "-F", o.format);
  out.push("-t", o.target);
  return out;
}

function cwdEnvArgs(o: PaneCommandArgs): string[] {
  return [...(o.cwd === undefined ? [] : ["-c", escapeFormat(o.cwd)]), ...envArgs(o.env)];
}

/** `new-window -d -P -F fmt -t target -n name -c cwd -e K=V… -- argv…`. */
export function newWindowArgs(o: PaneCommandArgs & { name?: string }): string[] {
  const name = o.name === undefined ? [] : ["-n", escapeFormat(o.name)];
  return ["new-window", ...paneCommandFlags(o), ...name, ...cwdEnvArgs(o), ...commandTail(o.argv)];
}

/** `split-window -d [-h] -P -F fmt -t %pane -c cwd -e K=V… -- argv…`. */
export function splitWindowArgs(o: PaneCommandArgs & { horizontal?: boolean }): string[] {
  const flags = paneCommandFlags(o, o.horizontal ? ["-h"] : []);
  return ["split-window", ...flags, ...cwdEnvArgs(o), ...commandTail(o.argv)];
}

/** `respawn-pane -k -t %pane -c cwd -e K=V… -- argv…`: replaces the pane's process, keeping its id. */
export function respawnPaneArgs(o: {
  target: string;
  cwd?: string;
  env?: Record<string, string>;
  argv: readonly string[];
}): string[] {
  return ["respawn-pane", "-k", "-t", o.target, ...cwdEnvArgs(o), ...commandTail(o.argv)];
}

export interface StartCommand {
  cwd: string;
  env: Record<string, string>;
  argv: readonly string[];
}

/** `set-option -p -t target remain-on-exit on`: a dead pane stays, with its exit status. */
export function remainOnExitArgs(target: string): string[] {
  return setOptionArgs({ scope: "pane", target, name: "remain-on-exit", value: "on" });
}

/**
 * What follows `new-window -n <mark>` in the same tmux command, aimed at that window by its mark: the pane is
 * kept when its command exits, takes its title, and the window its real name. A tmux command runs whole before
 * the server reaps any pane's process, so even a command that exits at once is kept.
 */
export function keepMarkedWindowArgs(window: string, name: string, title?: string): string[][] {
  return [
    remainOnExitArgs(window),
    ...(title === undefined ? [] : [paneTitleArgs(window, title)]),
    ["rename-window", "-t", window, escapeFormat(name)],
  ];
}

/** Starts the real command in an idle pane: remain-on-exit first, then respawn-pane, in one call. */
export function startPaneArgs(target: string, run: StartCommand): string[] {
  return chain(remainOnExitArgs(target), respawnPaneArgs({ ...run, target }));
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why tmux could not start this command (empty argv, bad env name, over 16 KB), or null. `window`: the name
 * and title a new window gets in the same command (keepMarkedWindowArgs), which count towards the 16 KB too.
 */
export function startCommandProblem(
  run: StartCommand,
  window?: { name: string; title?: string },
): string | null {
  if (run.argv.length === 0) return "empty argv";
  const bad = Object.keys(run.env).find((k) => !ENV_NAME.test(k));
  if (bad !== undefined) return `invalid environment name ${JSON.stringify(bad)}`;
  const kept = window
    ? keepMarkedWindowArgs(
        "=session-name-of-32-characters-x:=muster-new-000000000000",
        window.name,
        window.title,
      )
    : [];
  const bytes = commandBytes(chain(startPaneArgs("%0000000", run), ...kept));
  if (bytes > TMUX_MAX_COMMAND_BYTES) return `command and env take ${bytes} bytes, tmux accepts ~16 KB`;
  return null;
}

export type OptionScope = "pane" | "window" | "session";

/** `set-option -p|-w -t target name value` (pane scope avoids touching a user's other panes). */
export function setOptionArgs(o: {
  scope: OptionScope;
  target: string;
  name: string;
  value: string;
}): string[] {
  const flag = o.scope === "pane" ? ["-p"] : o.scope === "window" ? ["-w"] : [];
  return ["set-option", ...flag, "-t", o.target, o.name, escapeWord(o.value)];
}

/** `display-message -p -t target format`. */
export function displayMessageArgs(target: string, format: string): string[] {
  return ["display-message", "-p", "-t", target, format];
}

/** `list-panes -a -F format` (every pane of the server). */
export function listPanesArgs(format: string): string[] {
  return ["list-panes", "-a", "-F", format];
}

/** `load-buffer -b name -` (the text comes on stdin). */
export function loadBufferArgs(name: string): string[] {
  return ["load-buffer", "-b", name, "-"];
}

/** `paste-buffer -p -r -d -b name -t %pane`: bracketed if asked for, LF kept, buffer deleted. */
export function pasteBufferArgs(name: string, target: string): string[] {
  return ["paste-buffer", "-p", "-r", "-d", "-b", name, "-t", target];
}

/** `delete-buffer -b name`. */
export function deleteBufferArgs(name: string): string[] {
  return ["delete-buffer", "-b", name];
}

/** `if-shell -F -t target format then else`: `then`/`else` are tmux command strings. */
export function ifFormatArgs(target: string, format: string, then: string, otherwise: string): string[] {
  return ["if-shell", "-F", "-t", target, format, then, otherwise];
}

/** A session name that can be written into a tmux command string as it is. */
export const isPlainSessionName = (session: string): boolean => /^[A-Za-z0-9_-]+$/.test(session);

/**
 * `if-shell -F -t =session: <only the placeholder> "kill-session -t '=session'"`: the session is killed only
 * when its one window is the placeholder `muster` running `cat`, checked and done on the server at once.
 * `session` must be a plain name (isPlainSessionName): it is written into a tmux command string.
 */
export function killSessionIfOnlyPlaceholderArgs(session: string): string[] {
  if (!isPlainSessionName(session)) throw new Error(`not a plain session name: ${session}`);
  const only =
    "#{&&:#{==:#{session_windows},1},#{&&:#{==:#{window_name},muster},#{==:#{pane_current_command},cat}}}";
  return ["if-shell", "-F", "-t", `=${session}:`, only, `kill-session -t '=${session}'`];
}

/** `run-shell command` (waits for the job; its exit also makes the server reap other children). */
export function runShellArgs(command: string): string[] {
  return ["run-shell", escapeWord(command)];
}

/** `send-keys [-l] -t %pane -- keys…` (`-l`: the keys are literal text, not key names). */
export function sendKeysArgs(
  target: string,
  keys: readonly string[],
  opts: { literal?: boolean } = {},
): string[] {
  return ["send-keys", ...(opts.literal ? ["-l"] : []), "-t", target, "--", ...keys.map(escapeWord)];
}

/** `capture-pane -p -J [-e] -t %pane -S -N` (N history lines above the visible screen). */
export function capturePaneArgs(target: string, lines: number, opts: { escapes?: boolean } = {}): string[] {
  return ["capture-pane", "-p", "-J", ...(opts.escapes ? ["-e"] : []), "-t", target, "-S", `-${lines}`];
}

/** `kill-pane -t %pane`. */
export function killPaneArgs(target: string): string[] {
  return ["kill-pane", "-t", target];
}

/** `kill-server`. */
export function killServerArgs(): string[] {
  return ["kill-server"];
}

/** `select-window -t target`. */
export function selectWindowArgs(target: string): string[] {
  return ["select-window", "-t", target];
}

/** `select-pane -t %pane -T title` (the title is format-expanded: `##` keeps a literal `#`). */
export function paneTitleArgs(target: string, title: string): string[] {
  return ["select-pane", "-t", target, "-T", escapeFormat(title)];
}

/** `select-pane -t target`. */
export function selectPaneArgs(target: string): string[] {
  return ["select-pane", "-t", target];
}

/** `switch-client -t target`. */
export function switchClientArgs(target: string): string[] {
  return ["switch-client", "-t", target];
}

/** Brings a pane to the front: `[switch-client -t %N ;] select-window -t %N ; select-pane -t %N`. */
export function focusPaneArgs(pane: string, switchClient: boolean): string[] {
  const sw = switchClient ? [switchClientArgs(pane)] : [];
  return chain(...sw, selectWindowArgs(pane), selectPaneArgs(pane));
}

/** `attach-session -t target`. */
export function attachSessionArgs(target: string): string[] {
  return ["attach-session", "-t", escapeWord(target)];
}

/**
 * A session of its own in the group of `session` (sharing its windows, not its current window), gone when its
 * client detaches, with no status line: a viewer that moves nobody else's client. Read-only and left out of
 * window sizing unless it takes input.
 */
export function viewSessionArgs(session: string, viewer: string, input: boolean): string[][] {
  const flags = input ? [] : ["-f", "read-only,ignore-size"];
  return [
    ["new-session", "-t", escapeWord(`=${session}`), "-s", escapeWord(viewer), ...flags],
    ["set-option", "-t", escapeWord(viewer), "destroy-unattached", "on"],
    ["set-option", "-t", escapeWord(viewer), "status", "off"],
  ];
}

export interface PopupArgs {
  /** A pane of the client the popup shows on (`-t`): the caller's own. */
  target: string;
  argv: readonly string[];
  cwd?: string;
  title?: string;
  width?: string;
  height?: string;
}

/** `display-popup -E -t %pane [-d cwd] [-T title] [-w W] [-h H] -- argv…` (closes when the command exits). */
export function displayPopupArgs(o: PopupArgs): string[] {
  const opt = (flag: string, v: string | undefined, f = escapeWord) => (v === undefined ? [] : [flag, f(v)]);
  return [
    "display-popup",
    "-E",
    "-t",
    o.target,
    ...opt("-d", o.cwd, escapeFormat),
    ...opt("-T", o.title, escapeFormat),
    ...opt("-w", o.width),
    ...opt("-h", o.height),
    ...commandTail(o.argv),
  ];
}
