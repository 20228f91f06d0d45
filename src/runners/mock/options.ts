/** Controls of the mock agent, read from prompt lines of the form `mock: key=value …`. */
export interface MockOptions {
  sleep: number;
  tools: number;
  exit?: number;
  hang: boolean;
  bytes?: number;
  crash: boolean;
  /** A fixed answer instead of the default one. */
  reply?: string;
  /** The answer of this session's later turns whose prompts set no reply (`reply2=`: a scripted second answer). */
  laterReply?: string;
  /** Answer at this wall-clock time (epoch ms), so many mocks can finish at the same moment. */
  at?: number;
  /** Answer once this file exists (benchmarks release many mocks at one instant). */
  gate?: string;
  /** The answer is the moment its final record is written (`final-record-at <epoch ms>`), for benchmarks. */
  stamp: boolean;
  /** Stay this many ms after the final record before exiting, as a CLI shutting down does. */
  linger?: number;
  /** Ask permission for this tool at the start (pending), granted after the sleep. */
  ask?: string;
  /** Report this tool's permission refused before the final record. */
  deny?: string;
  /** End the turn errored with this provider error (rate_limit, quota, auth, overloaded). */
  provider?: string;
  /** …only until this wall-clock time (epoch ms), which is also the error's reset time; answers after it. */
  providerUntil?: number;
  /** …only while this file does not exist (a test lifts the provider's refusal by creating it). */
  providerUnless?: string;
}

const NUM = /^\d+(\.\d+)?$/;

/** Parses every `mock:` line; unknown keys are ignored so prompts stay forgiving. */
export function parseMockOptions(prompt: string): MockOptions {
  const opts: MockOptions = { sleep: 0, tools: 0, hang: false, crash: false, stamp: false };
  for (const line of prompt.split("\n")) {
    const m = /^\s*mock:\s*(.*)$/.exec(line);
    if (!m) continue;
    for (const word of m[1]!.trim().split(/\s+/)) {
      const eq = word.indexOf("=");
      const key = eq < 0 ? word : word.slice(0, eq);
      const value = eq < 0 ? "" : word.slice(eq + 1);
      if (key === "hang") opts.hang = true;
      else if (key === "crash") opts.crash = true;
      else if (key === "stamp") opts.stamp = true;
      else if (key === "reply") opts.reply = decodeURIComponent(value);
      else if (key === "reply2") opts.laterReply = decodeURIComponent(value);
      else if (key === "gate" && value) opts.gate = decodeURIComponent(value);
      else if (key === "ask" && value) opts.ask = decodeURIComponent(value);
      else if (key === "deny" && value) opts.deny = decodeURIComponent(value);
      else if (key === "provider" && value) opts.provider = value;
      else if (key === "provider-until" && NUM.test(value)) opts.providerUntil = Number(value);
      else if (key === "provider-unless" && value) opts.providerUnless = decodeURIComponent(value);
      else if (NUM.test(value)) {
        const n = Number(value);
        if (key === "sleep") opts.sleep = n;
        else if (key === "tools") opts.tools = Math.floor(n);
        else if (key === "exit") opts.exit = Math.floor(n);
        else if (key === "bytes") opts.bytes = Math.floor(n);
        else if (key === "at") opts.at = n;
        else if (key === "linger") opts.linger = n;
      }
    }
  }
  return opts;
}

/** The task line shown in the default answer: the first prompt line that is not a mock control. */
export function taskLine(prompt: string): string {
  const line = prompt.split("\n").find((l) => l.trim() !== "" && !/^\s*mock:/.test(l)) ?? "";
  const clean = line.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
  return clean.length > 120 ? `${clean.slice(0, 117)}...` : clean;
}
