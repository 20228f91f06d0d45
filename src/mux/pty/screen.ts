/**
 * The pty holder's model of its terminal: everything the program wrote goes through @xterm/headless, so
 * `capture` returns what a viewer sees (cursor moves, overwritten lines, clears), not the raw byte stream.
 * Loaded lazily by the holder (it costs ~100 ms), after the program has started.
 */
import xterm from "@xterm/headless";

/** Lines kept above the screen: enough for `capture --lines` at tmux's default history. */
const SCROLLBACK = 10_000;

export class Screen {
  private readonly term: InstanceType<typeof xterm.Terminal>;

  constructor(cols: number, rows: number) {
    this.term = new xterm.Terminal({ cols, rows, scrollback: SCROLLBACK, allowProposedApi: true });
  }

  write(data: Uint8Array): void {
    this.term.write(data);
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }

  /** Whether the program asked for bracketed paste (`ESC [?2004h`), once every write so far is parsed. */
  async bracketedPaste(): Promise<boolean> {
    await this.settled();
    return this.term.modes.bracketedPasteMode;
  }

  /**
   * Scrollback and screen as text, a line per row, wrapped rows joined (as `tmux capture-pane -J`),
   * trailing spaces cut; the caller trims blank rows below the output and takes the tail.
   */
  async render(): Promise<string> {
    await this.settled();
    const buf = this.term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < buf.length; i++) {
      const line = buf.getLine(i);
      if (!line) continue;
      // Untrimmed: a row that wraps may end in spaces that belong to its line.
      const text = line.translateToString(false);
      if (line.isWrapped && rows.length > 0) rows[rows.length - 1] += text;
      else rows.push(text);
    }
    return rows.map((r) => r.trimEnd()).join("\n");
  }

  /** Resolves once xterm has parsed everything written (its parser runs asynchronously). */
  private settled(): Promise<void> {
    return new Promise((resolve) => this.term.write("", resolve));
  }
}
