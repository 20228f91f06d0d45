/**
 * The scripted endpoint (test/fixtures/llm-endpoint-main.mjs) listening on the loopback of another network
 * namespace (an SSH test host's, a container's): a model request it sees can only have come from a process
 * in that namespace.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as readline from "node:readline";

const ENDPOINT_MAIN = path.resolve(import.meta.dirname, "../fixtures/llm-endpoint-main.mjs");

export interface SeenRequest {
  path: string;
  api: string | null;
  scenario?: string;
  body: unknown;
}

export interface NetnsEndpoint {
  /** Its address inside the namespace (`http://127.0.0.1:<port>`). */
  url: string;
  /** Every request it has seen, in order. */
  requests: SeenRequest[];
  /** The bodies of the model requests from the `from`th request on, as JSON text. */
  modelBodies(from?: number): string[];
  stop(): Promise<void>;
}

/** Starts the endpoint in the network namespace `netns` (a pin file or /proc/<pid>/ns/net). */
export function startEndpointIn(netns: string): Promise<NetnsEndpoint> {
  const child: ChildProcess = spawn("nsenter", [`--net=${netns}`, process.execPath, ENDPOINT_MAIN, "text"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const requests: SeenRequest[] = [];
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => {
    stderr += b.toString("utf8");
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await gone;
  };
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the endpoint exited (${code}): ${stderr}`)));
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = JSON.parse(line) as { url?: string; request?: SeenRequest };
      if (m.request) requests.push(m.request);
      if (m.url)
        resolve({
          url: m.url,
          requests,
          modelBodies: (from = 0) =>
            requests
              .slice(from)
              .filter((r) => r.api !== null)
              .map((r) => JSON.stringify(r.body)),
          stop,
        });
    });
  });
}
