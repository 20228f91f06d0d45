import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { BIN, type Sandbox } from "./cli.js";

/** A client connected to a real `muster mcp` process in the sandbox (its stderr piped, not shown). */
export async function connectMcp(sb: Sandbox): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: sb.env as Record<string, string>,
    cwd: sb.cwd,
    stderr: "pipe",
  });
  const client = new Client({ name: "muster-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A stdio transport that only ever ends the server's stdin: unlike the SDK's, its close sends no signal
 * after a grace period, so a server that exits shows it exited on its own (on stdin EOF). */
export class StdinOnlyTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Resolves with how the server process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly proc: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private stderrText = "";

  constructor(sb: Sandbox) {
    this.proc = spawn(process.execPath, [BIN, "mcp"], {
      cwd: sb.cwd,
      env: sb.env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) =>
      this.proc.once("exit", (code, signal) => resolve({ code, signal })),
    );
    this.proc.stderr?.on("data", (d: Buffer) => {
      this.stderrText += d.toString();
    });
    this.proc.on("error", (e) => this.onerror?.(e));
    this.proc.once("exit", () => this.onclose?.());
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get stderr(): string {
    return this.stderrText;
  }

  async start(): Promise<void> {
    this.proc.stdout?.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m !== null; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.proc.stdin?.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.proc.stdin?.end();
  }
}
