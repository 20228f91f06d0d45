/**
 * What a place made for one child (its container, its Pod) keeps under the state root so that every later
 * muster process makes the same place: its spec as resolved at spawn, `<state root>/<folder>/<child id>.json`,
 * and the factory that makes the place `<kind>:<child id>` from it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stateRoot } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { readJson, writeJsonAtomic } from "../../util/fsx.js";
import type { Place } from "../place.js";
import type { PlaceFactory } from "../registry.js";

export interface KeptSpecs<T> {
  file(root: string, id: string): string;
  save(root: string, id: string, spec: T): void;
  /** The kept spec of child `id`; a clear error when there is none (removed, or never made). */
  load(root: string, id: string): T;
  drop(root: string, id: string): void;
  /** The factory `registerPlace(kind, …)` takes: `<kind>:<child id>`, made from its kept spec. */
  factory(make: (id: string, spec: T, env: NodeJS.ProcessEnv) => Place): PlaceFactory;
}

/** Specs kept in `folder`; `what` names one in an error (`container`, `Pod`). */
export function keptSpecs<T>(folder: string, what: string): KeptSpecs<T> {
  const file = (root: string, id: string) => path.join(root, folder, `${id}.json`);
  const load = (root: string, id: string): T => {
    try {
      return readJson<T>(file(root, id));
    } catch {
      throw new MusterError(
        "not_found",
        `no ${what} is recorded for child ${id} (${file(root, id)} is missing)`,
      );
    }
  };
  return {
    file,
    save(root, id, spec) {
      fs.mkdirSync(path.dirname(file(root, id)), { recursive: true, mode: 0o700 });
      writeJsonAtomic(file(root, id), spec);
    },
    load,
    drop(root, id) {
      fs.rmSync(file(root, id), { force: true });
    },
    factory:
      (make) =>
      ({ name, env }) => {
        const id = name.slice(name.indexOf(":") + 1);
        if (!name.includes(":") || id === "")
          throw new MusterError("invalid_argument", `place ${name} names no child (<kind>:<child id>)`);
        return make(id, load(stateRoot(env), id), env);
      },
  };
}
