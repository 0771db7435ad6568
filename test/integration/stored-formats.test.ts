import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { itemBytes } from "../../bench/write-ledger.ts";
import { StoredFormatTooNew } from "../../lib/errors.ts";
import { flowKey } from "../../lib/job/flow-key.ts";
import type { Log } from "../../lib/observability/log.ts";
import { listBufferedEvents } from "../../lib/store/event-buffer-ops.ts";
import { listEventWaiters } from "../../lib/store/event-waiter-ops.ts";
import { readFlowKeyState } from "../../lib/store/flow-key-ops.ts";
import { bufferedEventKey, eventWaiterKey, indexKeys, tokenKey } from "../../lib/store/keys.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { FORMAT_VERSION, STORED_FORMATS, type StoredFormat } from "../../lib/store/stored-formats.ts";
import { getToken } from "../../lib/store/token-ops.ts";
import { jobMessageProblem, parseJobMessage } from "../../lib/transport/job-message.ts";
import { CLAIMS_BUCKET } from "../../local/emulators.ts";
import { OffsetClock } from "../support/clock.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { fixtureSets, loadFixtures, loadIntoStack } from "../support/stored-format-fixtures.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Upgrades (docs/architecture.md §24): items and messages written by a released version stay
 * readable. Each kept set of fixtures (test/fixtures/stored-formats/v<N>/, captured from a real run
 * by scripts/capture-stored-formats.ts) is loaded into a fresh table of a real emulator, and today's
 * code reads it: every job's view, every message by the worker's schema, a queued job run from its
 * message, durable jobs resumed from their recorded steps by their event and their token, a flow
 * key's state, a group's view. A change that misreads any of them fails here.
 *
 * The stack's clock starts at the capture's time and runs on from there, so the fixtures' waits
 * (600 s) have not timed out, however long ago they were captured.
 */

const currentFormats = Object.keys(STORED_FORMATS) as StoredFormat[];
/** Formats kept in the table, one items file each (the message and claims objects have files of their own). */
const tableFormats = (formats: string[]) =>
  formats.filter((f) => f !== "message" && f !== "claimObject").sort();

describe("the kept sets of stored-format fixtures", () => {
  it("the newest set captures every format this code names, at its current version", () => {
    const sets = fixtureSets();
    expect(sets.length).toBeGreaterThan(0);
    // A version bumped, or a format added, without a new capture fails here (docs/architecture.md §24).
    const newest = loadFixtures(sets.at(-1) as string);
    expect(newest.manifest.versions).toEqual(STORED_FORMATS);
    expect([...newest.items.keys()].sort()).toEqual(tableFormats(currentFormats));
  });
});

describe.each(fixtureSets())("stored formats: set %s, read by today's code", (set) => {
  const fixtures = loadFixtures(set);
  const { manifest } = fixtures;
  const clock = new OffsetClock();
  clock.advance(manifest.capturedAt - Date.now());
  const errors: { message: string; attributes?: Record<string, unknown> }[] = [];
  const log: Log = {
    debug() {},
    info() {},
    warn() {},
    error: (message, attributes) => void errors.push({ message, ...(attributes ? { attributes } : {}) }),
  };
  const stack = localStackForFile({ app, clock, log });
  const { call, untilStatus } = stackHttp(() => stack().url);

  /** The job items of the set, as plain values (the table's attributes, unmarshalled). */
  const jobItems = (fixtures.items.get("job") ?? []).map((i) => unmarshall(i) as Json);
  const jobItem = (id: string) => jobItems.find((j) => j.id === id) as Json;
  const payloadItem = (id: string) =>
    (fixtures.items.get("payload") ?? []).map((i) => unmarshall(i) as Json).find((p) => p.pk === `job#${id}`);
  const claimsObject = (key: string) => fixtures.claims.find((o) => o.key === key)?.body;

  beforeAll(async () => {
    const { clients } = stack();
    await loadIntoStack(fixtures, clients, "skyforge-jobs", CLAIMS_BUCKET);
  });

  /** The job's item as the table holds it now, its format version included. */
  const rawJob = async (id: string) =>
    (
      await stack().engine.store.doc.send(
        new GetCommand({ TableName: "skyforge-jobs", Key: { pk: `job#${id}`, sk: "job" } }),
      )
    ).Item;

  it("holds a capture of every format its version named, each item stamped with a version this code reads", () => {
    expect([...fixtures.items.keys()].sort()).toEqual(tableFormats(Object.keys(manifest.versions)));
    for (const [format, items] of fixtures.items) {
      expect(items.length, format).toBeGreaterThan(0);
      // Stamped with the version its set wrote, one this code still reads.
      for (const item of items) {
        const version = Number(item[FORMAT_VERSION]?.N);
        expect(version, `${format} ${item.pk?.S}`).toBe(manifest.versions[format]);
        expect(version, `${format} ${item.pk?.S}`).toBeLessThanOrEqual(STORED_FORMATS[format]);
      }
    }
    expect(fixtures.messages.length).toBeGreaterThan(0);
    expect(fixtures.claims.length).toBeGreaterThan(0);
    expect(jobItems.length).toBe(new Set(jobItems.map((j) => j.id)).size);
    // The version costs a few bytes, not a write: a plain done job stays well under 1 KB.
    const plain = (fixtures.items.get("job") ?? []).find((i) => i.id?.S === manifest.jobs.plain);
    expect(itemBytes(plain ?? {})).toBeLessThan(1024);
  });

  it("the API shows every job item: its fields, its payload and result wherever they are kept", async () => {
    for (const item of jobItems) {
      const { status, body } = await call("GET", `/jobs/${item.id}`);
      expect(status, `GET /jobs/${item.id} (${item.kind}, ${item.status})`).toBe(200);
      expect(body).toMatchObject({
        id: item.id,
        kind: item.kind,
        queue: item.queue,
        status: item.status,
        attempts: item.attempts,
        maxAttempts: item.maxAttempts,
        createdAt: new Date(item.createdAt).toISOString(),
        runAt: new Date(item.runAt).toISOString(),
      });
      const payload = item.payloadObject
        ? claimsObject(item.payloadObject)
        : item.payloadRef
          ? payloadItem(item.id)?.payload
          : item.payload;
      expect(body.payload, `payload of ${item.id}`).toEqual(JSON.parse(payload));
      const result = item.resultObject ? claimsObject(item.resultObject) : item.result;
      if (result !== undefined) expect(body.result, `result of ${item.id}`).toEqual(JSON.parse(result));
      if (item.lastError !== undefined) expect(body.lastError).toBe(item.lastError);
      if (item.history) expect(body.history.length).toBeGreaterThanOrEqual(item.history.length);
    }
    // The kinds of jobs the capture made, each read above.
    const { jobs } = manifest;
    expect(jobItem(jobs.claimChecked as string).payloadObject).toBeDefined();
    expect(jobItem(jobs.largePayload as string).payloadRef).toBe(true);
    expect(jobItem(jobs.retried as string).history).toHaveLength(1);
    expect((await call("GET", `/jobs/${jobs.paused}`)).body.status).toBe("paused");
  });

  // Early, after the views of the items as captured: its race's timer ends 30 s after the capture,
  // where the stack's clock started. Only a set captured with a race has the case (v1 has none).
  if (manifest.race !== undefined)
    it("a durable job waiting for its race (after parallel steps and a child) resumes by its event's branch and finishes", async () => {
      const { job, event, match } = manifest.race as NonNullable<typeof manifest.race>;
      expect((await call("GET", `/jobs/${job}`)).body.waiting).toMatchObject({ for: "any" });
      const delivered = await call("POST", "/events", { name: event, match, data: { carrier: "capture" } });
      expect(delivered.status).toBe(202);
      const done = await untilStatus(job, "done");
      expect(done.result).toEqual({
        order: match,
        items: 2,
        shipped: true,
        echo: { order: match, reserved: 2 },
      });
      const steps = (await call("GET", `/jobs/${job}/steps`)).body.steps as Json[];
      expect(steps.find((s) => s.name === "shipping")).toMatchObject({ type: "race", won: "shipped" });
    });

  it("every message parses with the worker's message schema, as the job its item is", () => {
    for (const { body } of fixtures.messages) {
      expect(jobMessageProblem(body)).toBe("none");
      const message = parseJobMessage(body);
      expect(message?.v).toBe(manifest.versions.message);
      const item = jobItem(message?.id ?? "");
      if (item) expect(message).toMatchObject({ id: item.id, kind: item.kind, queue: item.queue });
    }
  });

  it("a queued job runs to done from its message, on a real worker", async () => {
    const id = manifest.jobs.queued as string;
    const message = fixtures.messages.find((m) => parseJobMessage(m.body)?.id === id);
    expect(message?.queue).toBe("default");
    expect((await call("GET", `/jobs/${id}`)).body.status).toBe("queued");
    const queue = stack().queues.get("default");
    await stack().clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queue?.url, MessageBody: message?.body }),
    );
    const done = await untilStatus(id, "done");
    expect(done.result).toEqual(JSON.parse(jobItem(id).payload));
    expect(done.attempts).toBe(1);
  });

  it("a durable job waiting for its event resumes and finishes from its recorded steps", async () => {
    const { job, event, match } = manifest.event;
    expect((await call("GET", `/jobs/${job}`)).body.waiting).toMatchObject({ for: "event", event, match });
    const delivered = await call("POST", "/events", { name: event, match, data: { paid: 42 } });
    expect(delivered.status).toBe(202);
    const done = await untilStatus(job, "done");
    expect(done.result).toEqual({ order: match, paid: { paid: 42 } });
    // The resume put the event's id (e, today's format) into the job's record: its version rose with it.
    expect((await rawJob(job))?.[FORMAT_VERSION]).toBe(STORED_FORMATS.job);
  });

  it("a durable job waiting for its token: the token completes, its recorded steps replay, it finishes", async () => {
    const { job, id, url } = manifest.token;
    const item = jobItem(job);
    const account = JSON.parse(item.steps["create-account"].v) as { account: string };
    expect((await call("GET", `/tokens/${id}`)).body).toMatchObject({ id, jobId: job, status: "pending" });
    const secret = new URL(url).searchParams.get("secret");
    const completed = await call("POST", `/tokens/${id}?secret=${secret}`, { data: { approved: true } });
    expect(completed.status).toBe(200);
    const done = await untilStatus(job, "done");
    // The account comes from the step the capture recorded: replayed, not run again.
    expect(done.result).toMatchObject({ user: "capture-user", ...account, approval: { approved: true } });
    const steps = (await call("GET", `/jobs/${job}/steps`)).body.steps as Json[];
    expect(steps.find((s) => s.name === "create-account")).toMatchObject({
      attempt: item.steps["create-account"].a,
      at: new Date(item.steps["create-account"].t).toISOString(),
    });
    expect((await call("GET", `/tokens/${id}`)).body.status).toBe("completed");
    // Its next step was recorded in today's shape (its op and place): the item's version rose with it.
    expect((await rawJob(job))?.[FORMAT_VERSION]).toBe(STORED_FORMATS.job);
  });

  it("a flow key's state reads: its places' holders, its parked job in line", async () => {
    const { kind, key, holders } = manifest.flowKey;
    const state = await readFlowKeyState(stack().engine.store, flowKey(kind, key));
    expect(Object.keys(state.holders).sort()).toEqual([...holders].sort());
    const view = await call("GET", `/keys/${kind}/${key}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ kind, key, running: holders.length, waiting: 1 });
    const parked = await call("GET", `/jobs/${manifest.jobs.parked}`);
    expect(parked.body).toMatchObject({ status: "queued", flowKey: key, waitingForKey: true });
  });

  // From v3 (#42): a job of several flow limits, parked in its second limit's line. Only a set that
  // holds one has this case (declared for it alone: earlier sets are not skipped, they lack it).
  if (manifest.jobs.reportParked !== undefined)
    it("a job of several flow limits reads: its keys, the line it waits in, and a place handed to it there", async () => {
      const reportRunning = String(manifest.jobs.reportRunning);
      const reportParked = String(manifest.jobs.reportParked);
      const parked = await call("GET", `/jobs/${reportParked}`);
      expect(parked.body).toMatchObject({
        status: "queued",
        flowKey: "capture-tenant",
        flowKeys: { user: "capture-user", llm: "llm" },
        waitingForKey: true,
      });
      const user = await call("GET", "/keys/tenant-report/capture-user?limit=user");
      expect(user.body).toMatchObject({ limit: "user", running: 1, waiting: 1, concurrency: 1 });
      const tenant = await call("GET", "/keys/tenant-report/capture-tenant");
      expect(tenant.body).toMatchObject({ limit: "tenant", running: 1, waiting: 0, concurrency: 3 });
      // The running report's run ends: its `user` place goes to the parked one, which starts.
      await stack().engine.flow.leavePlace({ ...jobItem(reportRunning), status: "done" } as never);
      await untilStatus(reportParked, "running");
      const state = await readFlowKeyState(
        stack().engine.store,
        flowKey("tenant-report", "capture-user", "user"),
      );
      expect(Object.keys(state.holders)).toEqual([reportParked]);
    });

  // From v5 (#42): a job of priority 4, the number on its item and in its message.
  if (manifest.jobs.prioritized !== undefined)
    it("a job of a numbered priority reads with it, from its item and from its message", async () => {
      const prioritized = String(manifest.jobs.prioritized);
      const job = await call("GET", `/jobs/${prioritized}`);
      expect(job.body).toMatchObject({ status: "done", priority: 4 });
      const message = fixtures.messages.find((m) => parseJobMessage(m.body)?.id === prioritized);
      expect(parseJobMessage(message?.body ?? "")).toMatchObject({ priority: 4 });
    });

  // From v4 (#43): a tagged job, its tags on its item and an entry per tag in the tag index.
  if (manifest.jobs.tagged !== undefined)
    it("a tagged job reads with its tags and is found by each of them", async () => {
      const tagged = String(manifest.jobs.tagged);
      const job = await call("GET", `/jobs/${tagged}`);
      expect(job.body).toMatchObject({ status: "done", tags: ["capture", "tenant:acme"] });
      for (const tag of ["capture", "tenant:acme"]) {
        const found = await call("GET", `/jobs?tag=${encodeURIComponent(tag)}`);
        expect(found.body.items.map((j: { id: string }) => j.id)).toEqual([tagged]);
      }
    });

  it("a group's view and its children read", async () => {
    const { id, completion } = manifest.group;
    const group = await call("GET", `/groups/${id}`);
    expect(group.status).toBe(200);
    expect(group.body).toMatchObject({ id, completionJobId: completion, counts: { total: 3, done: 3 } });
    const children = await call("GET", `/groups/${id}/children?status=done`);
    expect(children.body.items).toHaveLength(3);
    expect(await getJob(stack().engine.store, completion)).toMatchObject({ status: "done", completes: id });
  });

  it("a job item or a message of a newer format is refused, never misread or dropped (a rollback)", async () => {
    // The queued job's item and message as a later version would write them, under a new id.
    const source = fixtures.messages.find((m) => parseJobMessage(m.body)?.id === manifest.jobs.queued);
    const id = `${String(manifest.jobs.queued).slice(0, -4)}NEWR`;
    const item = {
      ...jobItem(manifest.jobs.queued as string),
      pk: `job#${id}`,
      id,
      fv: STORED_FORMATS.job + 1,
    };
    const { doc } = stack().engine.store;
    await doc.send(new PutCommand({ TableName: "skyforge-jobs", Item: item }));
    const queue = stack().queues.get("default")?.url;
    const body = (source?.body ?? "").replace(String(manifest.jobs.queued), id);
    await stack().clients.sqs.send(new SendMessageCommand({ QueueUrl: queue, MessageBody: body }));
    const newerMessage = JSON.stringify({
      ...JSON.parse(body),
      id: `${id.slice(0, -1)}M`,
      v: STORED_FORMATS.message + 1,
    });
    await stack().clients.sqs.send(new SendMessageCommand({ QueueUrl: queue, MessageBody: newerMessage }));

    const refusal = (what: RegExp) =>
      waitFor(async () => errors.find((e) => what.test(String(e.attributes?.error))), `a refusal of ${what}`);
    const { job: jobV, message: messageV } = STORED_FORMATS;
    await refusal(
      new RegExp(`job ${id} is in job format v${jobV + 1}; this skyforge reads job formats up to v${jobV}`),
    );
    await refusal(
      new RegExp(
        `message .* is in message format v${messageV + 1}; this skyforge reads message formats up to v${messageV}`,
      ),
    );
    // The claim left the item as the newer version wrote it.
    const raw = await doc.send(
      new GetCommand({ TableName: "skyforge-jobs", Key: { pk: `job#${id}`, sk: "job" } }),
    );
    expect(raw.Item).toMatchObject({ status: "queued", attempts: 0, fv: jobV + 1 });
    expect(raw.Item?.leaseToken).toBeUndefined();
    // Its view is refused too: a 500 whose log line names the item and its version.
    const view = await call("GET", `/jobs/${id}`);
    expect(view.status).toBe(500);
    expect(
      errors.some(
        (e) =>
          e.message === "unhandled API error" &&
          new RegExp(`job .* format v${jobV + 1}`).test(String(e.attributes?.error)),
      ),
    ).toBe(true);
  });

  it("a token, an event waiter or a kept event of a newer format is refused with StoredFormatTooNew, never taken for ours", async () => {
    const { doc } = stack().engine.store;
    const put = (Item: Record<string, unknown>) =>
      doc.send(new PutCommand({ TableName: "skyforge-jobs", Item }));
    const now = clock.now();
    const tokenId = "tok_01NEWERFORMAT0000000000000";
    await put({
      ...tokenKey(tokenId),
      ...{ id: tokenId, jobId: manifest.token.job, queue: "default", step: "approval", status: "pending" },
      ...{ secretHash: "x", createdAt: now, timeoutAt: now + 60_000, fv: STORED_FORMATS.token + 1 },
    });
    await expect(getToken(stack().engine.store, tokenId)).rejects.toThrow(StoredFormatTooNew);
    const pair = ["order.newer", "newer-format"] as const;
    await put({
      ...eventWaiterKey(...pair, manifest.event.job),
      ...{ queue: "default", step: "paid", expiresAt: Math.floor(now / 1000) + 600 },
      fv: STORED_FORMATS.eventWaiter + 1,
    });
    await expect(listEventWaiters(stack().engine.store, ...pair, { limit: 10 })).rejects.toThrow(
      `in eventWaiter format v${STORED_FORMATS.eventWaiter + 1}`,
    );
    await put({
      ...bufferedEventKey(...pair, now, "01NEWERFORMATEVENT00000000"),
      ...{ id: "01NEWERFORMATEVENT00000000", at: now, v: "{}", expiresAt: Math.floor(now / 1000) + 600 },
      fv: STORED_FORMATS.bufferedEvent + 1,
    });
    await expect(listBufferedEvents(stack().engine.store, ...pair, 0, 10)).rejects.toThrow(
      StoredFormatTooNew,
    );
  });

  it("the reaper promotes a due scheduled job of a known format, and leaves a newer one to its version", async () => {
    const scheduled = jobItem(manifest.jobs.scheduled as string);
    const runAt = clock.now();
    const copy = (suffix: string, fv: number) => {
      const id = `${scheduled.id.slice(0, -4)}${suffix}`;
      const keys = indexKeys(
        scheduled.queue,
        "scheduled",
        id,
        runAt,
        stack().engine.store.layout.indexShards,
      );
      return { ...scheduled, pk: `job#${id}`, id, runAt, ...keys, fv };
    };
    const known = copy("KNWN", scheduled.fv);
    const newer = copy("NEWR", STORED_FORMATS.job + 1);
    const { doc } = stack().engine.store;
    for (const Item of [known, newer]) await doc.send(new PutCommand({ TableName: "skyforge-jobs", Item }));
    await stack().ticker.tick();
    await untilStatus(known.id, "done");
    const raw = await doc.send(
      new GetCommand({ TableName: "skyforge-jobs", Key: { pk: newer.pk, sk: "job" } }),
    );
    expect(raw.Item).toMatchObject({ status: "scheduled", fv: STORED_FORMATS.job + 1, gsi1pk: newer.gsi1pk });
    expect(raw.Item?.promotingUntil).toBeUndefined();
  });
});
