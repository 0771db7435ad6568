import { describe, expect, it } from "vitest";
import { useCliOnStack } from "../support/skyforge-cli.ts";
import type { Json } from "../support/stack-http.ts";

/**
 * onExhausted "pause" end to end on the local stack (docs/architecture.md §21), with the demo kind
 * import-row: a row it can't read uses both attempts and pauses; GET shows why each attempt ended
 * and who ran it, the paused listing and the queue's counts show it; a refused payload writes
 * nothing; `npx skyforge jobs resume ID --payload …` runs it again and it finishes; a second resume
 * is a 409.
 */
const { call, untilStatus, cli } = useCliOnStack("skyforge-paused-");

describe("a paused job on the local stack", () => {
  it("pauses after its last attempt, is resumed with a fixed row by the CLI, and finishes", async () => {
    const enqueued = await call("POST", "/jobs", {
      kind: "import-row",
      payload: { line: "Ada Lovelace;ada@example.com" },
    });
    expect(enqueued.status).toBe(201);
    const id = enqueued.body.id as string;
    const paused = await untilStatus(id, "paused", 60_000);
    expect(paused).toMatchObject({ attempts: 2, maxAttempts: 2 });
    expect(paused.history.map((a: Json) => [a.attempt, a.outcome])).toEqual([
      [1, "retry"],
      [2, "paused"],
    ]);
    expect(paused.history[1].error).toMatch(/is not name,email,plan/);
    // The local stack's workers run in its own process, and say so.
    expect(paused.history[0].runner).toMatch(/^local:\d+$/);

    const listed = await call("GET", "/jobs?queue=default&status=paused&limit=100");
    expect(listed.body.items.map((j: Json) => j.id)).toContain(id);
    const queues = await call("GET", "/queues");
    expect(queues.body.items.find((q: Json) => q.name === "default").counts.paused).toBeGreaterThanOrEqual(1);

    const refused = await call("POST", `/jobs/${id}/resume`, { payload: { line: 42 } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("payload.line");
    expect((await call("GET", `/jobs/${id}`)).body).toMatchObject({ status: "paused", attempts: 2 });

    const resumed = await cli.json([
      "jobs",
      "resume",
      id,
      "--payload",
      '{"line":"Ada Lovelace,ada@example.com,pro"}',
    ]);
    expect(resumed).toMatchObject({ id, attempts: 0, payload: { line: "Ada Lovelace,ada@example.com,pro" } });
    const done = await untilStatus(id, "done");
    expect(done.result).toEqual({ name: "Ada Lovelace", email: "ada@example.com", plan: "pro" });
    expect(done.history.map((a: Json) => a.outcome)).toEqual(["retry", "paused", "done"]);

    const again = await cli.run(["jobs", "resume", id]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/only paused jobs can be resumed/);
  }, 120_000);
});
