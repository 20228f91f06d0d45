import { commandRunner } from "./command.js";
import { mockRunner } from "./mock.js";
import type { Runner } from "./types.js";

const RUNNERS: ReadonlyMap<string, Runner> = new Map([mockRunner, commandRunner].map((r) => [r.name, r]));

export const runnerNames = (): string[] => [...RUNNERS.keys()];

export function getRunner(name: string): Runner | undefined {
  return RUNNERS.get(name);
}
