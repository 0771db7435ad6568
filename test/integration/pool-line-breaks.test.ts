import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { poolHarnessPerTest } from "../support/pool-harness.ts";

// Issue 23's reproduction, end to end: fauxqs + dynalite, the PoolRunner and real children. A
// node-digest job whose text held U+2028 killed its child on every attempt ("child died mid-job
// twice"); an echoed U+2028 was a desync. Both characters now go to the child and come back whole.

const pool = poolHarnessPerTest();
const TEXT = "line\u2028separator\u2029paragraph";
const DIGEST_MJS = fileURLToPath(new URL("../../children/digest.mjs", import.meta.url));

describe("PoolRunner: U+2028 and U+2029 in payloads and results", () => {
  it("a Node digest job over a text holding them is done on its first attempt, by one child", async () => {
    const h = await pool.create({ spec: { argv: [process.execPath, DIGEST_MJS] } });
    const first = await h.settled(await h.enqueue({ text: TEXT }), "done");
    const second = await h.settled(await h.enqueue({ text: `again ${TEXT}` }), "done");
    const result = JSON.parse(first.result as string);
    expect(result.sha256).toBe(createHash("sha256").update(Buffer.from(TEXT)).digest("hex"));
    expect(first.attempts).toBe(1);
    expect(JSON.parse(second.result as string).pid).toBe(result.pid);
    expect(h.metrics.total("childDesyncs")).toBe(0);
    expect(h.log.matching(/child died mid-job/)).toEqual([]);
  });

  it("a result echoing them is stored whole, and the child stays warm", async () => {
    const h = await pool.create();
    const done = await h.settled(await h.enqueue({ act: "ok", echo: { [TEXT]: TEXT } }), "done");
    expect(done.attempts).toBe(1);
    expect(h.resultOf(done).echo).toEqual({ [TEXT]: TEXT });
    const next = await h.settled(await h.enqueue({ act: "ok" }), "done");
    expect(h.resultOf(next).pid).toBe(h.resultOf(done).pid);
  });
});
