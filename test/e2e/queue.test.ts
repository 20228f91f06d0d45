import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-queue");

describe("queued turns", () => {
  it("status lists the queued turns with their position, in human output, --json and ls --json", async () => {
    const id = (await sb.json(["spawn", "a slow turn\nmock: hang"])).data.id as string;
    await until(async () => (await sb.json(["status", id])).data.status === "running");
    const first = (await sb.json(["send", id, "first follow-up"])).data.turnId as string;
    const second = (await sb.json(["send", id, "second follow-up"])).data.turnId as string;

    const st = await sb.json(["status", id]);
    expect(st.data.status).toBe("running");
    expect(st.data.queuedTurns).toEqual([
      { position: 1, turnId: first, waitingFor: "turn" },
      { position: 2, turnId: second, waitingFor: "turn" },
    ]);
    expect(st.data.turnList).toHaveLength(1);
    // Numbered on from the started turn: the first follow-up will be turn 2.
    const human = (await sb.run(["status", id])).stdout;
    expect(human).toMatch(
      new RegExp(
        `^queued\\n  2\\. ${first}  queued · waiting for the turns ahead\\n  3\\. ${second}  queued`,
        "m",
      ),
    );
    const row = (await sb.json(["ls"])).data.children.find((c: { id: string }) => c.id === id);
    expect(row.queuedTurns.map((q: { turnId: string }) => q.turnId)).toEqual([first, second]);

    await sb.run(["cancel", id]);
    expect((await sb.json(["status", id])).data.queuedTurns).toEqual([]);
  });
});
