import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { IndexedStatus, JobStatus } from "../../lib/job/status.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import { cancel } from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys } from "../../lib/store/keys.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { resumeWaiting } from "../../lib/store/step-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";
import { queuedItem } from "../support/jobs.ts";

/**
 * A resume's condition finds the job scheduled by its `<queue>#scheduled#` index key, not its
 * status (the token callback's role may not touch a job's status: lib/deploy-plan/grants.ts). Each
 * job below waits for the token, as its item says; only the scheduled one may be resumed, whatever
 * the shard count its index key was written with, and the write asks for no item back.
 */
const waiting = { for: "token", token: "tok_1", until: Date.parse("2027-01-01T00:00:00Z") };
const indexed: readonly IndexedStatus[] = ["scheduled", "dead", "paused"];

describe.each(dynamoBackends)("resumeWaiting on $name", (factory) => {
  const client = clientOn(factory);
  let store: StoreContext;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    store = createStoreContext(client(), await freshTable(client(), "resume"), clock);
  });

  /** A job in `status` waiting for tok_1, with the index keys that status carries (`shards` of them). */
  async function waitingJob(status: JobStatus, shards = store.layout.indexShards): Promise<JobItem> {
    const item: JobItem = {
      ...queuedItem(clock),
      status,
      waiting,
      ...((indexed as readonly string[]).includes(status)
        ? indexKeys("default", status as IndexedStatus, "x", clock.now(), shards)
        : {}),
    } as JobItem;
    await store.doc.send(new PutCommand({ TableName: store.table, Item: item }));
    return item;
  }

  it("resumes a scheduled job waiting for the token, and nothing in any other status", async () => {
    for (const status of ["queued", "running", "done", "dead", "cancelled", "paused"] as const) {
      const job = await waitingJob(status);
      expect(await resumeWaiting(store, job, { token: "tok_1" }, clock.now() + 120_000), status).toBe(false);
      expect(await getJob(store, job.id), status).toEqual(job);
    }
    const job = await waitingJob("scheduled");
    expect(await resumeWaiting(store, job, { token: "tok_2" }, clock.now() + 120_000)).toBe(false);
    expect(await resumeWaiting(store, job, { token: "tok_1" }, clock.now() + 120_000)).toBe(true);
    const after = await getJob(store, job.id);
    expect(after).toMatchObject({
      status: "scheduled",
      runAt: clock.now(),
      promotingUntil: clock.now() + 120_000,
    });
    expect(after?.waiting).toBeUndefined();
    // Resumed once: a second completion's resume finds it no longer waiting.
    expect(await resumeWaiting(store, job, { token: "tok_1" }, clock.now() + 120_000)).toBe(false);
  });

  it("a waiting job cancelled through the store keeps its wait but leaves the index: no resume", async () => {
    const job = await waitingJob("scheduled");
    await cancel(store, job.id, Math.floor(clock.now() / 1000) + 86_400);
    expect((await getJob(store, job.id))?.waiting).toEqual(waiting);
    expect(await resumeWaiting(store, job, { token: "tok_1" }, clock.now() + 120_000)).toBe(false);
    expect((await getJob(store, job.id))?.status).toBe("cancelled");
  });

  it("a job suspended under a smaller shard count is still found scheduled", async () => {
    const job = await waitingJob("scheduled", 1);
    expect(await resumeWaiting(store, job, { token: "tok_1" }, clock.now() + 120_000)).toBe(true);
  });
});
