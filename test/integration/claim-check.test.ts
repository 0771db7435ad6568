import {
  DeleteObjectCommand,
  GetBucketLifecycleConfigurationCommand,
  ListObjectsV2Command,
} from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { CLAIM_CHECK_BYTES, CLAIMS_PREFIX } from "../../lib/claims/claim-keys.ts";
import { loadJobView } from "../../lib/claims/job-bodies.ts";
import { systemClock } from "../../lib/clock.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { DeliveryLane } from "../../lib/job/lanes.ts";
import { MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import { Producer } from "../../lib/producer/enqueue.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { jobKey } from "../../lib/store/keys.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { encodeMessageBody } from "../../lib/transport/job-message.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { LOCAL_AWS } from "../../local/emulators.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { type HttpRequest, httpApiEvent } from "../support/lambda-events.ts";
import { waitFor } from "../support/wait.ts";
import { doomedEngine } from "./crash-switch.ts";

/** Returns a blob of the asked size (or its payload's own blob): results as large as a test wants. */
const blobKind = (lane: DeliveryLane, name: string) =>
  defineUnboundKind({
    name,
    queue: "default",
    payload: z.object({ blob: z.string(), resultBytes: z.number().int().optional() }),
    maxAttempts: 2,
    timeoutSeconds: 30,
    lane,
    handler: async ({ blob, resultBytes }) => ({
      blob: resultBytes === undefined ? blob : "r".repeat(resultBytes),
      seen: blob.length,
    }),
  });

const kinds = [
  blobKind("fenced", "blob"),
  blobKind("at-least-once", "blob-alo"),
  blobKind("lean", "blob-lean"),
];

const harness = harnessPerTest();
const setUp = () => harness.create({ clock: systemClock, extraKinds: kinds });

/** A payload whose JSON is exactly `bytes` long. */
const payloadOf = (bytes: number) => {
  const blob = "p".repeat(bytes - JSON.stringify({ blob: "" }).length);
  expect(Buffer.byteLength(JSON.stringify({ blob }))).toBe(bytes);
  return { blob };
};

async function objectKeys(h: Harness): Promise<string[]> {
  const out = await h.engine.claims.s3.send(new ListObjectsV2Command({ Bucket: h.engine.claims.bucket }));
  return (out.Contents ?? []).map((o) => o.Key ?? "").sort();
}

async function runOne(engine: Engine, h: Harness) {
  const worker = createWorker(engine, { recordConcurrency: 10 });
  const out = await worker(await h.receive(10));
  expect(out.batchItemFailures).toEqual([]);
}

/** The job as GET /jobs/{id} answers it through the API handler, and the list page's item for it. */
async function viewed(engine: Engine, id: string) {
  const api = createApiHandler(engine);
  const call = async (req: HttpRequest) => {
    const res = await api(httpApiEvent(req), {} as never);
    expect(res.statusCode).toBe(200);
    return JSON.parse(String(res.body));
  };
  const one = await call({ method: "GET", path: `/jobs/${id}`, route: "/jobs/{id}" });
  const list = await call({ method: "GET", path: "/jobs", route: "/jobs", query: "limit=100" });
  return { one, listed: (list.items as { id: string }[]).find((j) => j.id === id) };
}

describe("the claim check on the emulators (fauxqs S3, dynalite)", () => {
  test("a payload over 8 KiB is one object; the message and the item carry only its key; GET and the handler see it", async () => {
    const h = await setUp();
    const c = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    const payload = payloadOf(200 * 1024);
    const { job } = await c.engine.producer.enqueue({ kind: "blob", payload });
    expect(job.payload).toEqual(payload);
    expect(c.crash.sent("PutObjectCommand")).toBe(1);
    const item = await getJob(h.engine.store, job.id);
    expect(item?.payloadObject).toMatch(new RegExp(`^${CLAIMS_PREFIX}\\d+d/${job.id}/payload$`));
    expect(item?.payload).toBeUndefined();
    expect(item?.payloadRef).toBeUndefined();
    // The message is small: SQS bills it as one request, not four.
    const peek = await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: h.urls.url, VisibilityTimeout: 0, WaitTimeSeconds: 1 }),
    );
    const body = peek.Messages?.[0]?.Body ?? "";
    expect(body.length).toBeLessThan(1024);
    expect(JSON.parse(body)).toMatchObject({ id: job.id, payloadObject: item?.payloadObject });

    await runOne(c.engine, h);
    const done = await settled(h, job.id, "done");
    // Its result echoes the 200 KB blob: that is an object too, under the attempt's own key.
    expect(done.resultObject).toMatch(new RegExp(`^${CLAIMS_PREFIX}\\d+d/${job.id}/result-1$`));
    expect(done.result).toBeUndefined();
    expect(c.crash.sent("GetObjectCommand")).toBe(1);
    expect(c.crash.sent("PutObjectCommand")).toBe(2);
    const { one, listed } = await viewed(h.engine, job.id);
    expect(one).toMatchObject({
      status: "done",
      payload,
      result: { blob: payload.blob, seen: payload.blob.length },
    });
    expect(one.omitted).toBeUndefined();
    // A list page leaves bodies kept in the bucket out, and says so.
    expect(listed).toMatchObject({ id: job.id, payload: null, omitted: ["payload", "result"] });
    expect(listed).not.toHaveProperty("result");
    expect(await objectKeys(h)).toEqual([item?.payloadObject, done.resultObject].sort());
  });

  test("at 8 KiB a payload or result stays in the table; one byte over, it goes to the bucket", async () => {
    const h = await setUp();
    // A payload exactly at the threshold, asking for a result exactly at it too.
    const atBlob = (resultBytes: number) =>
      "p".repeat(CLAIM_CHECK_BYTES - JSON.stringify({ blob: "", resultBytes }).length);
    const blob = atBlob(5000);
    const resultBytes = CLAIM_CHECK_BYTES - JSON.stringify({ blob: "", seen: blob.length }).length;
    const atPayload = { blob: atBlob(resultBytes), resultBytes };
    expect(Buffer.byteLength(JSON.stringify(atPayload))).toBe(CLAIM_CHECK_BYTES);
    const over = payloadOf(CLAIM_CHECK_BYTES + 1);
    const atJob = await h.engine.producer.enqueue({ kind: "blob", payload: atPayload });
    const overJob = await h.engine.producer.enqueue({ kind: "blob", payload: over });
    const atItem = await getJob(h.engine.store, atJob.job.id);
    const overItem = await getJob(h.engine.store, overJob.job.id);
    expect(atItem?.payloadObject).toBeUndefined();
    expect(atItem?.payloadRef).toBe(true);
    expect(overItem?.payloadObject).toBeDefined();
    expect(await objectKeys(h)).toEqual([overItem?.payloadObject]);
    await runOne(h.engine, h);
    const atDone = await settled(h, atJob.job.id, "done");
    const overDone = await settled(h, overJob.job.id, "done");
    expect(atDone.resultObject).toBeUndefined();
    expect(Buffer.byteLength(atDone.result ?? "")).toBe(CLAIM_CHECK_BYTES);
    expect(overDone.result).toBeUndefined();
    const overView = await loadJobView(h.engine.store, h.engine.claims, overDone);
    expect(Buffer.byteLength(JSON.stringify(overView.result))).toBeGreaterThan(CLAIM_CHECK_BYTES);
    expect(overView.result).toMatchObject({ seen: over.blob.length });
  });

  test("a result may be up to 1 MiB; past it the job is dead with a clear error", async () => {
    const h = await setUp();
    const room = MAX_PAYLOAD_BYTES - JSON.stringify({ blob: "", seen: 1 }).length;
    const fits = await h.engine.producer.enqueue({ kind: "blob", payload: { blob: "x", resultBytes: room } });
    const over = await h.engine.producer.enqueue({
      kind: "blob",
      payload: { blob: "x", resultBytes: room + 1 },
    });
    await runOne(h.engine, h);
    const done = await settled(h, fits.job.id, "done");
    const view = await loadJobView(h.engine.store, h.engine.claims, done);
    expect(Buffer.byteLength(JSON.stringify(view.result))).toBe(MAX_PAYLOAD_BYTES);
    const dead = await settled(h, over.job.id, "dead");
    expect(dead.lastError).toMatch(/result is over 1048576 bytes/);
  });

  test("a payload over 1 MiB is a 413 and nothing is written, object included", async () => {
    const h = await setUp();
    await expect(
      h.engine.producer.enqueue({ kind: "blob", payload: payloadOf(MAX_PAYLOAD_BYTES + 1) }),
    ).rejects.toMatchObject({ code: "payload_too_large" });
    expect(await objectKeys(h)).toEqual([]);
  });

  test("an enqueue that dies after the object's write leaves only the object, under a prefix that expires", async () => {
    const h = await setUp();
    // An SQS that can't be reached: the send fails after the payload's object is written.
    const deadSqs = new SQSClient({ ...LOCAL_AWS, endpoint: "http://127.0.0.1:9", maxAttempts: 1 });
    const producer = new Producer({
      ...h.engine,
      transport: new SqsTransport(deadSqs, new Map([[h.queue.name, h.urls.url]])),
    });
    await expect(producer.enqueue({ kind: "blob", payload: payloadOf(20_000) })).rejects.toThrow();
    deadSqs.destroy();
    const keys = await objectKeys(h);
    expect(keys).toHaveLength(1);
    const id = keys[0]?.split("/")[2] ?? "";
    expect(await getJob(h.engine.store, id)).toBeUndefined();
    const { Rules } = await h.engine.claims.s3.send(
      new GetBucketLifecycleConfigurationCommand({ Bucket: h.engine.claims.bucket }),
    );
    const rule = Rules?.find((r) => keys[0]?.startsWith(r.Filter?.Prefix ?? "\0"));
    expect(rule?.Expiration?.Days).toBeGreaterThan(0);
    expect(keys[0]?.startsWith(`${CLAIMS_PREFIX}${rule?.Expiration?.Days}d/`)).toBe(true);
  });

  test("a payload whose object has expired ends its job dead, saying so, without running it", async () => {
    const h = await setUp();
    const { job } = await h.engine.producer.enqueue({ kind: "blob", payload: payloadOf(10_000) });
    const key = (await getJob(h.engine.store, job.id))?.payloadObject ?? "";
    await h.engine.claims.s3.send(new DeleteObjectCommand({ Bucket: h.engine.claims.bucket, Key: key }));
    await runOne(h.engine, h);
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toMatch(/payload expired/);
    expect(dead.attempts).toBe(1);
  });

  test("at-least-once and lean keep their one or two writes: the body still goes to the bucket", async () => {
    const h = await setUp();
    const c = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    const payload = payloadOf(32 * 1024);
    const alo = await c.engine.producer.enqueue({ kind: "blob-alo", payload });
    const lean = await c.engine.producer.enqueue({ kind: "blob-lean", payload });
    await runOne(c.engine, h);
    for (const id of [alo.job.id, lean.job.id]) {
      const done = await settled(h, id, "done");
      expect(done.payloadObject).toBeDefined();
      expect(done.resultObject).toBeDefined();
      expect((await loadJobView(h.engine.store, h.engine.claims, done)).result).toMatchObject({
        seen: payload.blob.length,
      });
    }
    // Two payloads and two results, each written once and read once.
    expect(c.crash.sent("PutObjectCommand")).toBe(4);
    expect(c.crash.sent("GetObjectCommand")).toBe(2);
  });

  test("a message naming another job's object (or any key not its own) is refused, and nothing reads that key", async () => {
    const h = await setUp();
    const secret = payloadOf(20_000);
    const victim = await h.engine.producer.enqueue({ kind: "blob", payload: secret });
    await runOne(h.engine, h);
    const victimKey = (await settled(h, victim.job.id, "done")).payloadObject ?? "";
    expect(victimKey).toMatch(new RegExp(`^${CLAIMS_PREFIX}\\d+d/${victim.job.id}/payload$`));

    // Whoever can send to the queue forges jobs whose payloadObject points elsewhere in the bucket.
    const forged = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const days = victimKey.split("/")[1];
    const foreignKeys = [
      victimKey,
      `${CLAIMS_PREFIX}${days}/${forged}/result-1`,
      `${CLAIMS_PREFIX}${days}/${forged}/payload/../../${victim.job.id}/payload`,
      `${CLAIMS_PREFIX}9d/${forged}/payload`, // not a retention class
      `${CLAIMS_PREFIX}0${days}/${forged}/payload`,
      `other/${forged}/payload`,
    ];
    const now = Date.now();
    for (const payloadObject of foreignKeys) {
      await h.sqs.send(
        new SendMessageCommand({
          QueueUrl: h.urls.url,
          MessageBody: encodeMessageBody({
            v: 1,
            id: forged,
            kind: "blob",
            queue: h.queue.name,
            maxAttempts: 2,
            priority: "normal",
            createdAt: now,
            runAt: now,
            payloadObject,
          }),
        }),
      );
    }
    const c = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    const worker = createWorker(c.engine, { recordConcurrency: 10 });
    let handled = 0;
    for (let round = 0; handled < foreignKeys.length && round < 10; round++) {
      const batch = await h.receive(10, 1);
      handled += batch.Records.length;
      // Each refused and deleted, none left to retry.
      expect((await worker(batch)).batchItemFailures).toEqual([]);
    }
    expect(handled).toBe(foreignKeys.length);
    expect(c.crash.sent("GetObjectCommand")).toBe(0);
    expect(await getJob(h.engine.store, forged)).toBeUndefined();
    expect((await h.receive(10, 0)).Records).toEqual([]);

    // An item that names another job's objects (seeded before messages were checked) shows neither.
    const { job } = await h.engine.producer.enqueue({ kind: "blob", payload: { blob: "mine" } });
    await h.engine.store.doc.send(
      new UpdateCommand({
        TableName: h.engine.store.table,
        Key: jobKey(job.id),
        UpdateExpression: "SET payloadObject = :p, resultObject = :r REMOVE payload",
        ExpressionAttributeValues: { ":p": victimKey, ":r": victimKey.replace(/payload$/, "result-1") },
      }),
    );
    const tampered = (await getJob(h.engine.store, job.id)) as NonNullable<
      Awaited<ReturnType<typeof getJob>>
    >;
    const view = await loadJobView(c.engine.store, c.engine.claims, tampered);
    expect(view.payload).not.toEqual(secret);
    expect(view.result).toBeUndefined();
    expect(c.crash.sent("GetObjectCommand")).toBe(0);
  });

  test("a group's children carry large payloads; a page of children names the results left in the bucket", async () => {
    const h = await setUp();
    const { group } = await h.engine.groups.create({
      children: [
        { kind: "blob", payload: payloadOf(20_000) },
        { kind: "blob", payload: { blob: "small" } },
      ],
      onComplete: { kind: "blob", payload: { blob: "done" } },
    });
    const poller = h.startPoller();
    await waitFor(
      async () => (await h.engine.groups.get(group.id)).status === "succeeded" || undefined,
      "the group to succeed",
    );
    await poller.stop();
    const page = await h.engine.groups.children(group.id, {});
    expect(page.items.map((c) => c.status)).toEqual(["done", "done"]);
    expect(page.items[0]).toMatchObject({ omitted: ["result"] });
    expect(page.items[0]).not.toHaveProperty("result");
    expect(page.items[1]).toMatchObject({ result: { blob: "small", seen: 5 } });
    expect(page.items[1]).not.toHaveProperty("omitted");
  });
});
