import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { appendReceipts, readReceipts } from "../../src/delivery/receipts.js";
import {
  buildManifest,
  type DeliveryRecord,
  MANIFEST_MAX_BYTES,
  MANIFEST_MAX_RECORDS,
} from "../../src/delivery/records.js";

const rec = (i: number, reason = ""): DeliveryRecord => ({
  recordId: `c${i}:t${i}`,
  id: `c${i}`,
  agent: "mock",
  turnId: `t${i}`,
  status: "completed",
  ...(reason ? { reason } : {}),
  completedAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
});

describe("manifests", () => {
  it("are bounded by count and size, oldest first, and say how many more wait", () => {
    const many = Array.from({ length: 300 }, (_, i) => rec(299 - i));
    const m = buildManifest(many);
    expect(m.records).toHaveLength(MANIFEST_MAX_RECORDS);
    expect(m.more).toBe(300 - MANIFEST_MAX_RECORDS);
    expect(m.records[0]!.recordId).toBe("c0:t0");
    const big = buildManifest(Array.from({ length: 100 }, (_, i) => rec(i, "x".repeat(1000))));
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(MANIFEST_MAX_BYTES);
    expect(big.more).toBeGreaterThan(0);
  });
});

describe("receipts", () => {
  it("persist, survive a torn line, and are read back as a set", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mt-rcpt-")), "receipts.ndjson");
    appendReceipts(file, ["a:1", "b:2"], "inbox");
    fs.appendFileSync(file, '{"v":1,"recordId":"torn');
    appendReceipts(file, ["c:3"], "result");
    expect([...readReceipts(file)].sort()).toEqual(["a:1", "b:2", "c:3"]);
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});
