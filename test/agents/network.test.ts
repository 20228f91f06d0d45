// npm test runs the suite inside a private network namespace when it can (scripts/test.mjs): prove it.
import * as net from "node:net";
import * as os from "node:os";
import { describe, expect, it } from "vitest";

describe.runIf(process.env.MUSTER_TEST_NETNS === "1")("the tests run without a network", () => {
  it("only loopback exists, and an outside address cannot be reached", async () => {
    expect(Object.keys(os.networkInterfaces())).toEqual(["lo"]);
    const err = await new Promise<string>((resolve) => {
      const s = net.connect({ host: "1.1.1.1", port: 443 });
      s.on("connect", () => {
        s.destroy();
        resolve("connected");
      });
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    expect(err).toBe("ENETUNREACH");
  });
});
