// A far host's wait for its run slot (src/child/far-admission.ts): the grant the relay writes is followed by a
// poke (util/poke.ts), which ends the wait at once instead of at the next poll. The poll here is far longer
// than the test's timeout, so only the poke can let the wait end in time. Runs in a forked worker: the
// SIGUSR2 handler and host.json are this process's own.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readAdmissionRequest, writeAdmission } from "../../src/artifacts/admission.js";
import { FarAdmission } from "../../src/child/far-admission.js";
import { listenForPokes } from "../../src/child/pokes.js";
import { pokeHost, pokesWork } from "../../src/util/poke.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "muster-far-admission-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const until = async (f: () => boolean) => {
  for (let i = 0; i < 400 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!f()) throw new Error("condition not met");
};

describe("a far host's admission", () => {
  it.skipIf(!pokesWork())(
    "a poke after the grant ends the wait without waiting for the poll",
    async () => {
      listenForPokes(dir);
      const slots = new FarAdmission(dir, 4, 600_000);
      const granted = slots.acquire(
        () => {},
        () => false,
        "t1",
      );
      await until(() => readAdmissionRequest(dir) !== undefined);
      const request = readAdmissionRequest(dir)!.request;
      writeAdmission(dir, { v: 1, request, state: "granted", limit: 4 });
      expect(pokeHost(dir)).toBe(true);
      expect(await granted).toBe(true);
      slots.release();
      expect(fs.existsSync(path.join(dir, "admission.json"))).toBe(false);
    },
    10_000,
  );
});
