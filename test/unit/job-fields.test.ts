import { readFileSync } from "node:fs";
import { marshall } from "@aws-sdk/util-dynamodb";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineKind } from "../../app/define.ts";
import { app } from "../../app/index.ts";
import { itemBytes } from "../../bench/write-ledger.ts";
import { JobView } from "../../lib/job/schemas.ts";
import { plan } from "../../lib/producer/plan.ts";
import { validateEnqueue } from "../../lib/producer/validate.ts";
import { Expr, Update } from "../../lib/store/expression.ts";
import { JOB_FIELD_PARTS, JOB_FIELDS } from "../../lib/store/job-fields.ts";
import { type JobItem, toJobView } from "../../lib/store/job-item.ts";
import { seedIfMissing } from "../../lib/store/lease-ops.ts";
import { encodeMessageBody, type JobMessage, seedFromMessage } from "../../lib/transport/job-message.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";
import { testRegistry } from "../support/test-app.ts";

/**
 * The attributes a job's item and message store, pinned for jobs that use every field, across every
 * copy the map of a job's fields (lib/store/job-fields.ts) derives: plan's item and message, a message
 * sent again from the item, a claim's seed and what it writes, and the view. A change to the map that
 * moves a field into or out of any of them changes stored bytes, and fails here.
 */

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1";
const lean = defineKind({
  name: "fields-lean",
  queue: "default",
  payload: z.object({ blob: z.string() }),
  lane: "at-least-once",
  maxAttempts: 1,
  timeoutSeconds: 30,
  handler: async () => null,
});
const registry = testRegistry([lean]);
const planOf = (raw: object, extras: Parameters<typeof plan>[3] = {}) =>
  plan(validateEnqueue(raw, registry, app.queues), NOW, 4, { id: "01JFIELDS00000000000000000", ...extras });

/** The names and values a seed writes: each `#n = if_not_exists(#n, :v)` of the update. */
function seedWrites(seed: ReturnType<typeof seedFromMessage>): Record<string, unknown> {
  const e = new Expr();
  const text = seedIfMissing(new Update(e), seed).toString();
  const writes: Record<string, unknown> = {};
  for (const [, name, value] of text.matchAll(/(#\w+) = (?:if_not_exists\(#\w+, )?(:\w+)/g))
    writes[e.names[name as string] as string] = e.values[value as string];
  return writes;
}

/** Long strings (large payloads) as their length, so that the pins stay readable. */
const shortened = (value: unknown): unknown =>
  typeof value === "string" && value.length > 200
    ? `<${value.length} chars>`
    : Array.isArray(value)
      ? value.map(shortened)
      : value instanceof Set || value === null || typeof value !== "object"
        ? value
        : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortened(v)]));

/** What every copy makes of a planned job: its item and message, a resend, a seed and its writes, the view. */
function copies(p: ReturnType<typeof planOf>, extraItem: Partial<JobItem> = {}, extraMessage: object = {}) {
  const item = { ...p.item, ...extraItem } as JobItem;
  const message = { ...p.message, ...extraMessage } as JobMessage;
  const seed = seedFromMessage(message);
  return shortened({
    item: p.item,
    itemBytes: itemBytes(marshall(p.item, { removeUndefinedValues: true })),
    message: p.message,
    messageBytes: Buffer.byteLength(encodeMessageBody(p.message)),
    resent: messageFromItem(item, p.payloadJson),
    seed,
    seedWrites: seedWrites(seed),
    view: toJobView(item, p.payloadJson),
  });
}

describe("a job's fields, as each copy keeps them", () => {
  it("a flow-controlled group child with every request option, its lineage and trace", () => {
    const p = planOf(
      {
        kind: "tenant-echo",
        payload: { tenant: "gold-1", seq: 7 },
        uniqueKey: "u-1",
        tags: ["order-42", "tenant:gold-1"],
        timeoutSeconds: 30,
        startWithinSeconds: 90,
        maxAttempts: 5,
        priority: "critical",
        delaySeconds: 3,
      },
      { member: { g: "grp-1", s: 2, p: 5, n: 4 }, completes: "grp-0", replayOf: "01JOLD", trace: TRACE },
    );
    const running = {
      status: "running",
      attempts: 2,
      leaseToken: "tok",
      leaseUntil: NOW + 60_000,
      startedAt: NOW + 1000,
      runner: "local:1",
      runDeadline: NOW + 900_000,
      history: [{ a: 1, s: NOW + 10, e: NOW + 20, o: "retry", x: "boom" }],
      historyDropped: 1,
      cancelRequested: true,
      lastError: "boom",
      claimedFrom: "queued",
      resentAt: NOW + 5,
      childGroups: new Set(["grp-b", "grp-a"]),
      handoff: "grp-h",
      parked: true,
      fv: 1,
    } as Partial<JobItem>;
    expect(copies(p, running, { rateSlot: NOW + 500 })).toMatchInlineSnapshot(`
      {
        "item": {
          "attempts": 0,
          "completes": "grp-0",
          "createdAt": 1767323045000,
          "flowKey": "gold-1",
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "maxAttempts": 5,
          "member": {
            "g": "grp-1",
            "n": 4,
            "p": 5,
            "s": 2,
          },
          "payload": "{"tenant":"gold-1","seq":7}",
          "pk": "job#01JFIELDS00000000000000000",
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": 1767323048000,
          "sk": "job",
          "startBy": 1767323138000,
          "status": "queued",
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "timeoutSeconds": 30,
          "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1",
          "uniqueKey": "u-1",
        },
        "itemBytes": 409,
        "message": {
          "completes": "grp-0",
          "createdAt": 1767323045000,
          "flowKey": "gold-1",
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "maxAttempts": 5,
          "member": {
            "g": "grp-1",
            "n": 4,
            "p": 5,
            "s": 2,
          },
          "payload": "{"tenant":"gold-1","seq":7}",
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": 1767323048000,
          "startBy": 1767323138000,
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "timeoutSeconds": 30,
          "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1",
          "uniqueKey": "u-1",
          "v": 5,
        },
        "messageBytes": 480,
        "resent": {
          "createdAt": 1767323045000,
          "flowKey": "gold-1",
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "maxAttempts": 5,
          "payload": "{"tenant":"gold-1","seq":7}",
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": 1767323048000,
          "startBy": 1767323138000,
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "timeoutSeconds": 30,
          "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1",
          "uniqueKey": "u-1",
          "v": 5,
        },
        "seed": {
          "completes": "grp-0",
          "createdAt": 1767323045000,
          "flowKey": "gold-1",
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "maxAttempts": 5,
          "member": {
            "g": "grp-1",
            "n": 4,
            "p": 5,
            "s": 2,
          },
          "payload": "{"tenant":"gold-1","seq":7}",
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": 1767323048000,
          "startBy": 1767323138000,
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "timeoutSeconds": 30,
          "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1",
          "uniqueKey": "u-1",
        },
        "seedWrites": {
          "completes": "grp-0",
          "createdAt": 1767323045000,
          "flowKey": "gold-1",
          "fv": 5,
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "maxAttempts": 5,
          "member": {
            "g": "grp-1",
            "n": 4,
            "p": 5,
            "s": 2,
          },
          "payload": "{"tenant":"gold-1","seq":7}",
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": 1767323048000,
          "startBy": 1767323138000,
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "timeoutSeconds": 30,
          "trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01;v=1",
          "uniqueKey": "u-1",
        },
        "view": {
          "attempts": 2,
          "cancelRequested": true,
          "childGroups": [
            "grp-a",
            "grp-b",
          ],
          "completes": "grp-0",
          "createdAt": "2026-01-02T03:04:05.000Z",
          "flowKey": "gold-1",
          "group": "grp-1",
          "history": [
            {
              "attempt": 1,
              "endedAt": "2026-01-02T03:04:05.020Z",
              "error": "boom",
              "outcome": "retry",
              "startedAt": "2026-01-02T03:04:05.010Z",
            },
            {
              "attempt": 2,
              "outcome": "running",
              "runner": "local:1",
              "startedAt": "2026-01-02T03:04:06.000Z",
            },
          ],
          "historyDropped": 1,
          "id": "01JFIELDS00000000000000000",
          "kind": "tenant-echo",
          "lastError": "boom",
          "leaseUntil": "2026-01-02T03:05:05.000Z",
          "maxAttempts": 5,
          "payload": {
            "seq": 7,
            "tenant": "gold-1",
          },
          "priority": "critical",
          "queue": "default",
          "replayOf": "01JOLD",
          "runAt": "2026-01-02T03:04:08.000Z",
          "startBy": "2026-01-02T03:05:38.000Z",
          "startedAt": "2026-01-02T03:04:06.000Z",
          "status": "running",
          "tags": [
            "order-42",
            "tenant:gold-1",
          ],
          "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          "uniqueKey": "u-1",
        },
      }
    `);
  });

  it("a batch kind's job, due past SQS's delay, its payload in its own item", () => {
    const p = planOf({
      kind: "batch-echo",
      payload: { key: "k-1", value: "x".repeat(500) },
      runAt: new Date(NOW + 3_600_000).toISOString(),
    });
    expect(copies(p)).toMatchInlineSnapshot(`
      {
        "item": {
          "attempts": 0,
          "batchKey": "k-1",
          "createdAt": 1767323045000,
          "gsi1pk": "batch#scheduled#3",
          "gsi1sk": "001767326645000#01JFIELDS00000000000000000",
          "id": "01JFIELDS00000000000000000",
          "inBacklog": true,
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payloadRef": true,
          "pk": "job#01JFIELDS00000000000000000",
          "priority": "normal",
          "queue": "batch",
          "runAt": 1767326645000,
          "sk": "job",
          "status": "scheduled",
        },
        "itemBytes": 274,
        "message": {
          "batchKey": "k-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "inBacklog": true,
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payload": "<524 chars>",
          "payloadRef": true,
          "priority": "normal",
          "queue": "batch",
          "runAt": 1767326645000,
          "v": 5,
        },
        "messageBytes": 758,
        "resent": {
          "batchKey": "k-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "inBacklog": true,
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payload": "<524 chars>",
          "payloadRef": true,
          "priority": "normal",
          "queue": "batch",
          "runAt": 1767326645000,
          "v": 5,
        },
        "seed": {
          "batchKey": "k-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "inBacklog": true,
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payloadRef": true,
          "priority": "normal",
          "queue": "batch",
          "runAt": 1767326645000,
        },
        "seedWrites": {
          "batchKey": "k-1",
          "createdAt": 1767323045000,
          "fv": 5,
          "id": "01JFIELDS00000000000000000",
          "inBacklog": true,
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payloadRef": true,
          "priority": "normal",
          "queue": "batch",
          "runAt": 1767326645000,
        },
        "view": {
          "attempts": 0,
          "createdAt": "2026-01-02T03:04:05.000Z",
          "id": "01JFIELDS00000000000000000",
          "kind": "batch-echo",
          "maxAttempts": 3,
          "payload": {
            "key": "k-1",
            "value": "<500 chars>",
          },
          "priority": "normal",
          "queue": "batch",
          "runAt": "2026-01-02T04:04:05.000Z",
          "status": "scheduled",
        },
      }
    `);
  });

  it("a collect burst's job that waits for its singleton key's earlier jobs, a durable wait", () => {
    const p = planOf({ kind: "doc-digest", payload: { doc: "d-1", rev: 1 } });
    const item = {
      after: ["01JEARLIER"],
      enqueues: 3,
      status: "scheduled",
      steps: { a: { n: 0, a: 1, t: NOW, v: "1" } },
      version: "v2",
      waiting: { for: "event", until: NOW + 600_000, event: "paid", match: "o-1" },
    } as Partial<JobItem>;
    expect(copies(p, item, { after: ["01JEARLIER"] })).toMatchInlineSnapshot(`
      {
        "item": {
          "attempts": 0,
          "burst": [
            "{"doc":"d-1","rev":1}",
          ],
          "burstBytes": 21,
          "coalesceKey": "d-1",
          "createdAt": 1767323045000,
          "enqueues": 1,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": "{"doc":"d-1","rev":1}",
          "pk": "job#01JFIELDS00000000000000000",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323047000,
          "sk": "job",
          "status": "queued",
        },
        "itemBytes": 264,
        "message": {
          "coalesceKey": "d-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": "{"doc":"d-1","rev":1}",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323047000,
          "v": 5,
        },
        "messageBytes": 223,
        "resent": {
          "after": [
            "01JEARLIER",
          ],
          "coalesceKey": "d-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": "{"doc":"d-1","rev":1}",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323047000,
          "v": 5,
        },
        "seed": {
          "after": [
            "01JEARLIER",
          ],
          "coalesceKey": "d-1",
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": "{"doc":"d-1","rev":1}",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323047000,
        },
        "seedWrites": {
          "after": [
            "01JEARLIER",
          ],
          "coalesceKey": "d-1",
          "createdAt": 1767323045000,
          "fv": 5,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": "{"doc":"d-1","rev":1}",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323047000,
        },
        "view": {
          "after": [
            "01JEARLIER",
          ],
          "attempts": 0,
          "coalesceKey": "d-1",
          "createdAt": "2026-01-02T03:04:05.000Z",
          "enqueues": 3,
          "id": "01JFIELDS00000000000000000",
          "kind": "doc-digest",
          "maxAttempts": 3,
          "payload": {
            "doc": "d-1",
            "rev": 1,
          },
          "priority": "normal",
          "queue": "default",
          "runAt": "2026-01-02T03:04:07.000Z",
          "status": "scheduled",
          "version": "v2",
          "waiting": {
            "event": "paid",
            "for": "event",
            "match": "o-1",
            "until": "2026-01-02T03:14:05.000Z",
          },
        },
      }
    `);
  });

  it("an at-least-once job whose payload is over the claim check's threshold", () => {
    const p = planOf({ kind: "fields-lean", payload: { blob: "y".repeat(9000) } });
    expect(copies(p)).toMatchInlineSnapshot(`
      {
        "item": {
          "attempts": 0,
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "maxAttempts": 1,
          "payloadObject": "claims/35d/01JFIELDS00000000000000000/payload",
          "pk": "job#01JFIELDS00000000000000000",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323045000,
          "sk": "job",
          "status": "queued",
        },
        "itemBytes": 229,
        "message": {
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "lane": "at-least-once",
          "maxAttempts": 1,
          "payloadObject": "claims/35d/01JFIELDS00000000000000000/payload",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323045000,
          "v": 5,
        },
        "messageBytes": 251,
        "resent": {
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "maxAttempts": 1,
          "payloadObject": "claims/35d/01JFIELDS00000000000000000/payload",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323045000,
          "v": 5,
        },
        "seed": {
          "createdAt": 1767323045000,
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "maxAttempts": 1,
          "payloadObject": "claims/35d/01JFIELDS00000000000000000/payload",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323045000,
        },
        "seedWrites": {
          "createdAt": 1767323045000,
          "fv": 5,
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "maxAttempts": 1,
          "payloadObject": "claims/35d/01JFIELDS00000000000000000/payload",
          "priority": "normal",
          "queue": "default",
          "runAt": 1767323045000,
        },
        "view": {
          "attempts": 0,
          "createdAt": "2026-01-02T03:04:05.000Z",
          "id": "01JFIELDS00000000000000000",
          "kind": "fields-lean",
          "maxAttempts": 1,
          "payload": {
            "blob": "<9000 chars>",
          },
          "priority": "normal",
          "queue": "default",
          "runAt": "2026-01-02T03:04:05.000Z",
          "status": "queued",
        },
      }
    `);
  });
});

describe("the map of a job's fields", () => {
  const entries = Object.entries(JOB_FIELDS);
  const names = (test: (f: (typeof entries)[number][1]) => boolean) =>
    entries.filter(([, f]) => test(f)).map(([n]) => n);

  it("names each field in one feature's part only", () => {
    const inParts = Object.values(JOB_FIELD_PARTS).flatMap((part) => Object.keys(part));
    expect(inParts.length).toBe(new Set(inParts).size);
    expect(inParts.sort()).toEqual(Object.keys(JOB_FIELDS).sort());
  });

  it("seeds only fields the item stores and every message carries, and resends only what the item stores", () => {
    for (const name of names((f) => f.seed !== undefined)) {
      expect(JOB_FIELDS[name as keyof typeof JOB_FIELDS].item, name).toBeDefined();
      expect(JOB_FIELDS[name as keyof typeof JOB_FIELDS].message, name).toBeDefined();
    }
    expect(names((f) => f.message === "always" && f.item === undefined)).toEqual([]);
    // A message is rebuilt from the item with what the worker reads before it has the item.
    expect(names((f) => f.message === "sender")).toEqual([
      "lane",
      "member",
      "completes",
      "rateSlot",
      "rateSlots",
      "placeSince",
      "parent",
    ]);
  });

  it("shows a field as it is or as a time only under a name JobView has", () => {
    const shownAsIs = names((f) => f.view === "same" || f.view === "time");
    expect(shownAsIs.filter((name) => !(name in JobView.shape))).toEqual([]);
  });

  it("shows a bare item as a whole JobView: every field the view requires has a rule", () => {
    const bare = planOf({ kind: "echo", payload: { hi: 1 } }).item;
    expect(JobView.safeParse(toJobView(bare)).error).toBeUndefined();
  });

  it("shows a parked job waiting for its key, and the limit whose line it is in when not the first's", () => {
    const bare = planOf({ kind: "echo", payload: { hi: 1 } }).item;
    const parked = { ...bare, flowKey: "acme", flowKeys: { user: "ann" }, parked: true };
    expect(toJobView({ ...parked, parkedIn: "user" })).toMatchObject({
      waitingForKey: true,
      waitingIn: "user",
    });
    expect(toJobView(parked)).toMatchObject({ waitingForKey: true });
    expect(toJobView(parked).waitingIn).toBeUndefined();
    expect(toJobView({ ...parked, parkedIn: "user", status: "running" }).waitingIn).toBeUndefined();
  });
});

describe("docs/architecture.md §3", () => {
  it("names every field of the map", () => {
    const doc = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## 3. Data model"), doc.indexOf("## 4. Job lifecycle"));
    const missing = Object.keys(JOB_FIELDS).filter((name) => !new RegExp(`\`${name}\\??\``).test(section));
    expect(missing).toEqual([]);
  });
});
