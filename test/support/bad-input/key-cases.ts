import type { ErrorCode } from "../../../lib/errors.ts";
import { created, invalid, missingOrInvalid, notFound } from "./answers.ts";
import type { BadCase, BadExpect, BadRequest } from "./case.ts";
import { badCase } from "./case.ts";

/**
 * Keys the store can't hold (issue 37 §5): a key a kind computes from the payload (batch, debounce,
 * singleton, flow) and an event's name and match go into the table's keys, which DynamoDB keeps as
 * UTF-8 within 2 048 bytes (a partition key) or 1 024 (a sort key, the parked-job index's among
 * them). A lone surrogate has no UTF-8 form; a key of many-byte characters can pass its character
 * bound and still encode past a byte limit. Each such key is a 400 naming the field, on every route
 * that takes one. The byte counts below are checked against the store's own key builders by the
 * suite (test/e2e/bad-input.test.ts), since dynalite takes keys of any size.
 */

/** A 3-byte character in UTF-8, 9 characters once URI-encoded (`%E4%B8%AD`). */
export const cjk = (n: number) => "中".repeat(n);
export const LONE_KEYS = { "lone high surrogate": "k\uD800", "lone low surrogate": "k\uDC00" } as const;

/**
 * The longest CJK flow keys a parked job's index sort key (`<kind>#<key, URI-encoded>#<15-digit
 * time>#<26-char id>`) holds within 1 024 bytes, for tenant-echo (55 + 9n bytes) and tenant-rate
 * (54 + 9n): one more character is over.
 */
export const FLOW_FITS = 107;
/** The longest CJK match `evt#order.paid#<match, URI-encoded>` holds within 2 048 bytes (15 + 9n). */
export const EVENT_MATCH_FITS = 225;
/** A batch or coalesce key's partition (`bkey#…`, `coal#…`) fits even at 256 CJK characters. */
export const KEY_CHARS = 256;

/** The demo app's keyed kinds, each with the payload that carries `key` where its key function reads it. */
export const keyedKinds: Record<
  string,
  { type: "batch" | "debounce" | "singleton" | "flow"; payload(key: string): object }
> = {
  "batch-echo": { type: "batch", payload: (key) => ({ key }) },
  "doc-index": { type: "debounce", payload: (doc) => ({ doc, rev: 1 }) },
  "doc-digest": { type: "debounce", payload: (doc) => ({ doc, rev: 1 }) },
  "doc-sync": { type: "singleton", payload: (doc) => ({ doc, rev: 1 }) },
  "tenant-echo": { type: "flow", payload: (tenant) => ({ tenant }) },
  "tenant-rate": { type: "flow", payload: (tenant) => ({ tenant }) },
};

const post = (json: unknown): BadRequest => ({ method: "POST", path: "/jobs", json });
const job = (kind: string, key: string) => ({ kind, payload: keyedKinds[kind]?.payload(key) });

/** Each kind's keys: lone surrogates refused; the longest that fits taken; one past it refused. */
const enqueueCases: BadCase[] = Object.entries(keyedKinds).flatMap(([kind, { type }]) => [
  ...Object.entries(LONE_KEYS).map(([what, key]) =>
    badCase(`POST /jobs ${kind} ${type} key: ${what}`, post(job(kind, key)), invalid),
  ),
  ...(type === "flow"
    ? [
        badCase(
          `POST /jobs ${kind} flow key: ${FLOW_FITS} CJK (fits)`,
          post(job(kind, cjk(FLOW_FITS))),
          created,
        ),
        badCase(
          `POST /jobs ${kind} flow key: ${FLOW_FITS + 1} CJK (its parked index key is over 1 024 bytes)`,
          post(job(kind, cjk(FLOW_FITS + 1))),
          invalid,
        ),
      ]
    : [
        badCase(
          `POST /jobs ${kind} ${type} key: ${KEY_CHARS} CJK (fits)`,
          post(job(kind, cjk(KEY_CHARS))),
          created,
        ),
      ]),
]);

/**
 * A tenant's third job at once parks (tenant-echo: 2 runs at once), and the parked entry's index key
 * holds the key: the key checks must hold there too, not only for a key's first job.
 */
const parkingCases: BadCase[] = [
  ...Object.entries({ ...LONE_KEYS, "oversize (108 CJK)": cjk(FLOW_FITS + 1) }).flatMap(([what, tenant]) =>
    [1, 2, 3].map((n) =>
      badCase(
        `POST /jobs tenant-echo key ${what}, job ${n} of 3 (the third would park)`,
        post({ kind: "tenant-echo", payload: { tenant, sleepMs: 5_000 } }),
        invalid,
      ),
    ),
  ),
];

type Item = ErrorCode | "ok";
const badKeyJobs = [
  job("batch-echo", LONE_KEYS["lone high surrogate"]),
  job("doc-index", LONE_KEYS["lone low surrogate"]),
  job("doc-sync", LONE_KEYS["lone high surrogate"]),
  job("tenant-rate", cjk(FLOW_FITS + 1)),
  job("tenant-echo", "batch-fine"),
];
const badKeyItems: Item[] = [
  "validation_error",
  "validation_error",
  "validation_error",
  "validation_error",
  "ok",
];

/** The other routes that enqueue: a batch, Invoke, a group's child, a schedule's payload. */
const otherRouteCases: BadCase[] = [
  {
    name: "POST /jobs/batch unstorable keys fail alone",
    request: { method: "POST", path: "/jobs/batch", json: { jobs: badKeyJobs } },
    expect: { status: 200, items: badKeyItems },
  },
  ...(["sdk", "fetch"] as const).flatMap((via): BadCase[] => [
    {
      name: `Invoke (${via}) a batch with unstorable keys fails them alone`,
      request: { invoke: via, payload: JSON.stringify({ jobs: badKeyJobs }) },
      expect: { items: badKeyItems },
    },
    {
      name: `Invoke (${via}) a flow key over its index's byte limit`,
      request: { invoke: via, payload: JSON.stringify(job("tenant-echo", cjk(FLOW_FITS + 1))) },
      expect: { code: "validation_error" },
    },
  ]),
  badCase(
    "POST /groups a child with a lone surrogate flow key",
    {
      method: "POST",
      path: "/groups",
      json: { children: [job("tenant-echo", "k\uDC00")], onComplete: { kind: "echo" } },
    },
    invalid,
  ),
  badCase(
    "POST /groups onComplete with a flow key over its byte limit",
    {
      method: "POST",
      path: "/groups",
      json: { children: [], onComplete: job("tenant-echo", cjk(FLOW_FITS + 1)) },
    },
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} a payload whose batch key has a lone surrogate",
    {
      method: "PUT",
      path: "/schedules/bad-key",
      json: { cron: "0 0 * * *", kind: "batch-echo", payload: { key: "k\uD800" }, enabled: false },
    },
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} a payload whose flow key is over its byte limit",
    {
      method: "PUT",
      path: "/schedules/bad-key",
      json: {
        cron: "0 0 * * *",
        kind: "tenant-rate",
        payload: { tenant: cjk(FLOW_FITS + 1) },
        enabled: false,
      },
    },
    invalid,
  ),
];

/** GET /keys/{kind}/{key}: a key no job could have is a 400, before any read. */
const keyRouteCases: BadCase[] = [
  badCase(
    `GET /keys/tenant-echo/{key} ${FLOW_FITS} CJK (fits; no job left under it)`,
    { method: "GET", path: `/keys/tenant-echo/${encodeURIComponent(cjk(FLOW_FITS))}` },
    notFound,
  ),
  badCase(
    `GET /keys/tenant-echo/{key} ${FLOW_FITS + 1} CJK (over its index's byte limit)`,
    { method: "GET", path: `/keys/tenant-echo/${encodeURIComponent(cjk(FLOW_FITS + 1))}` },
    invalid,
  ),
  badCase(
    "GET /keys/tenant-echo/{key} a lone surrogate's WTF-8 bytes",
    { method: "GET", path: "/keys/tenant-echo/k%ED%A0%80" },
    missingOrInvalid,
  ),
];

const accepted: BadExpect = { status: 202 };
const event = (json: unknown): BadRequest => ({ method: "POST", path: "/events", json });

/** POST /events: the name and match are its waiters' partition key. */
const eventCases: BadCase[] = [
  ...Object.entries(LONE_KEYS).flatMap(([what, s]) => [
    badCase(`POST /events name: ${what}`, event({ name: s, match: "o-1" }), invalid),
    badCase(`POST /events match: ${what}`, event({ name: "order.paid", match: s }), invalid),
  ]),
  badCase(
    `POST /events match ${EVENT_MATCH_FITS} CJK (fits)`,
    event({ name: "order.paid", match: cjk(EVENT_MATCH_FITS) }),
    accepted,
  ),
  badCase(
    `POST /events match ${EVENT_MATCH_FITS + 1} CJK (its partition key is over 2 048 bytes)`,
    event({ name: "order.paid", match: cjk(EVENT_MATCH_FITS + 1) }),
    invalid,
  ),
  badCase(
    "POST /events name and match 200 CJK each (over 2 048 bytes together)",
    event({ name: cjk(200), match: cjk(200) }),
    invalid,
  ),
];

export const keyCases: BadCase[] = [
  ...enqueueCases,
  ...parkingCases,
  ...otherRouteCases,
  ...keyRouteCases,
  ...eventCases,
];
