/**
 * The part of node-pty muster uses, for builds where node-pty is absent: it is an optional dependency (a
 * native addon that needs a C++ toolchain where it has no prebuilt binary), and TypeScript reads this only
 * when it finds no node-pty package. Without it the pty backend and TUI mode say they are unavailable.
 */
declare module "node-pty" {
  export interface IDisposable {
    dispose(): void;
  }
  export interface IPty {
    readonly pid: number;
    // As node-pty types it; with `encoding: null` the data are Buffers.
    onData(listener: (data: string) => void): IDisposable;
    onExit(listener: (e: { exitCode: number; signal?: number }) => void): IDisposable;
    write(data: string | Buffer): void;
    resize(columns: number, rows: number): void;
    kill(signal?: string): void;
  }
  export interface IPtyForkOptions {
    name?: string;
    cols?: number;
    rows?: number;
    cwd?: string;
    env?: { [key: string]: string | undefined };
    encoding?: string | null;
  }
  export function spawn(file: string, args: string[] | string, options: IPtyForkOptions): IPty;
}
