import { describe, expect, it } from "vitest";
import { MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import type { RunShape } from "../../scripts/bench-args.ts";
import { payload } from "../../scripts/bench-config.ts";
import { type Cell, MATRIX_PAYLOAD_SIZES, matrixTable } from "../../scripts/bench-matrix.ts";

describe("bench payloads", () => {
  it("serialize to exactly the asked size, whatever the sequence number", () => {
    for (const bytes of [32, 256, 1024, 4096, 32 * 1024, MAX_PAYLOAD_BYTES])
      for (const seq of [0, 7, 1_000_042, 3_004_999])
        expect(Buffer.byteLength(JSON.stringify(payload(seq, bytes))), `${bytes}/${seq}`).toBe(bytes);
    expect(() => payload(1_000_000, 20)).toThrow(RangeError);
  });

  it("the matrix's sizes are the issue's table, all within the payload limit", () => {
    expect(MATRIX_PAYLOAD_SIZES).toEqual([256, 1024, 4096, 32768, 204800]);
    expect(Math.max(...MATRIX_PAYLOAD_SIZES)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  });
});

const ok = (payloadBytes: number, lane: RunShape["lane"], usd: number): Cell => ({
  ok: true,
  json: {
    kind: "echo",
    lane,
    payloadBytes,
    jobsPerSecond: 100,
    latencyMs: { p50: 1, p99: 2 },
    requestsPerJob: { sqs: 0.4, dynamodbWrite: 3, dynamodbRead: 0, lambda: 0.2, s3: 0 },
    wcuPerJob: 3,
    rcuPerJob: 0,
    usdPerMillionJobs: usd,
    claimStorageUsdPerMillion: 0,
  },
});
const failed = (payloadBytes: number, lane: RunShape["lane"], reason: string, refused: boolean): Cell => ({
  ok: false,
  shape: { kind: "echo", lane, payloadBytes, unique: false, failOnce: false },
  reason,
  refused,
});

describe("the matrix table", () => {
  it("$/M per lane, fenced over its 256 B cost, and n/a cells with their reasons once each", () => {
    const table = matrixTable(
      [256, 1024, 204800],
      ["fenced", "lean"],
      [
        ok(256, "fenced", 2),
        ok(256, "lean", 1.5),
        ok(1024, "fenced", 4.5),
        failed(1024, "lean", 'lane "lean" is not one of fenced', true),
        failed(204800, "fenced", "result is over 32768 bytes", false),
        failed(204800, "lean", "result is over 32768 bytes", false),
      ],
    );
    expect(table.split("\n")).toEqual([
      "| payload | fenced $/M | lean $/M | × the 256 B cost (fenced) |",
      "| --- | ---: | ---: | ---: |",
      "| 256 B | $2.0000 | $1.5000 | 1.00× |",
      "| 1 KB | $4.5000 | n/a [1] | 2.25× |",
      "| 200 KB | n/a [2] | n/a [2] | n/a |",
      "",
      '[1] refused by the engine: lane "lean" is not one of fenced',
      "[2] run failed: result is over 32768 bytes",
    ]);
  });

  it("without fenced, the ratio is the first lane's", () => {
    const table = matrixTable([256, 4096], ["lean"], [ok(256, "lean", 1), ok(4096, "lean", 3)]);
    expect(table).toContain("| payload | lean $/M | × the 256 B cost (lean) |");
    expect(table).toContain("| 4 KB | $3.0000 | 3.00× |");
  });
});
