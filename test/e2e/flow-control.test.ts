import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { OffsetClock } from "../support/clock.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";

/**
 * The flow-control demo kinds over HTTP on the local stack (docs/guide/flow-control.md): doc-index
 * (trailing debounce), doc-digest (collect), doc-sync (singleton, cancel-running), and a start
 * deadline that passes while the queue is paused.
 */
/** The stack's clock: the start-deadline case moves it past the deadline instead of waiting it out. */
const clock = new OffsetClock();
const stack = localStackForFile({ app, clock });

const { call, untilStatus } = stackHttp(() => stack().url);
const job = async (id: string) => (await call("GET", `/jobs/${id}`)).body;

/** 20 revisions of one new doc, as fast as HTTP takes them; the answers and when the last went out. */
async function burst(kind: string): Promise<{ answers: { status: number; body: Json }[]; lastAt: number }> {
  const doc = `doc-${randomUUID()}`;
  const answers = [];
  for (let rev = 1; rev <= 20; rev++)
    answers.push(await call("POST", "/jobs", { kind, payload: { doc, rev } }));
  return { answers, lastAt: Date.now() };
}

describe("flow control on the local stack", () => {
  it("doc-index: 20 enqueues of one doc run once, with rev 20, within period + 2 s of the last; all answer its id", async () => {
    const { answers, lastAt } = await burst("doc-index");
    const id = answers[0]?.body.id;
    expect(answers[0]?.status).toBe(201);
    expect(
      answers.slice(1).every((a) => a.status === 200 && a.body.id === id && a.body.debounced === true),
    ).toBe(true);
    const done = await untilStatus(id, "done");
    expect(done.result).toMatchObject({ rev: 20 });
    expect(done.attempts).toBe(1);
    expect(done.enqueues).toBe(20);
    expect(Date.parse(done.startedAt) - lastAt).toBeLessThanOrEqual(4000);
  });

  it("doc-digest: one call gets revs 1..20 in order, and answers each of them", async () => {
    const { answers } = await burst("doc-digest");
    const id = answers[0]?.body.id;
    expect(answers.every((a) => a.body.id === id)).toBe(true);
    const done = await untilStatus(id, "done");
    const revs = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(done.result).toHaveLength(20);
    expect(done.result.every((r: Json) => JSON.stringify(r.revs) === JSON.stringify(revs))).toBe(true);
  });

  it("doc-sync: a second enqueue cancels the first, sleeping 10 s, and runs after it ended", async () => {
    const doc = `doc-${randomUUID()}`;
    const first = await call("POST", "/jobs", {
      kind: "doc-sync",
      payload: { doc, rev: 1, sleepMs: 10_000 },
    });
    await untilStatus(first.body.id, "running");
    const second = await call("POST", "/jobs", { kind: "doc-sync", payload: { doc, rev: 2 } });
    expect(second.status).toBe(201);
    expect(second.body.after).toEqual([first.body.id]);
    const cancelled = await untilStatus(first.body.id, "cancelled");
    const done = await untilStatus(second.body.id, "done");
    expect(done.result).toEqual({ doc, rev: 2 });
    expect(Date.parse(done.startedAt)).toBeGreaterThanOrEqual(Date.parse(cancelled.finishedAt));
  });

  it("a job with startWithinSeconds 2 on a paused queue, resumed 4 s later by the stack's clock, never runs: dead, saying why", async () => {
    expect((await call("POST", "/queues/default/pause")).status).toBe(200);
    try {
      const { body } = await call("POST", "/jobs", {
        kind: "echo",
        payload: { n: 1 },
        startWithinSeconds: 2,
      });
      // The deadline is the scenario: the queue stays paused past it (the stack's clock moves on 4 s;
      // this case is the file's last, so no other case sees the moved clock).
      clock.advance(4000);
      expect((await job(body.id)).status).toBe("queued");
      expect((await call("POST", "/queues/default/resume")).status).toBe(200);
      const dead = await untilStatus(body.id, "dead");
      expect(dead.lastError).toBe("start deadline passed: not started within 2 s of being due");
      expect(dead.attempts).toBeLessThanOrEqual(1);
    } finally {
      await call("POST", "/queues/default/resume");
    }
  });
});
