import type { ErrorCode } from "../../../lib/errors.ts";
import { waitFor } from "../wait.ts";
import {
  type BadCase,
  type BadExpect,
  type BadRequest,
  nestedArrays,
  type OddString,
  oddNames,
  oddStrings,
  oddUrlParts,
} from "./case.ts";

/**
 * Job groups: every /groups route and the three group shapes of Invoke. The groups named in
 * GROUPS are made before the rows run (prepareGroupFixtures); the rows run in order, so a row may
 * count on an earlier one (the first create of an id, then its duplicate).
 */

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Json = any;
export type JsonCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Json }>;

/** Group ids the rows use. The suite's stack starts empty, so fixed ids are fresh on every run. */
export const GROUPS = {
  /** Ran to succeeded before the rows: can't be cancelled. */
  succeeded: "bi-succeeded",
  /** Sealed, its one child delayed an hour: stays sealed for the whole suite. */
  sealed: "bi-sealed",
  /** Open: takes the valid additions. */
  open: "bi-open",
  /** Open, and only ever sent refused additions: must stay empty. */
  untouched: "bi-untouched",
  /** Open, sealed twice by the rows. */
  sealTwice: "bi-seal-twice",
  /** Open, sealed by Invoke twice. */
  sealInvoke: "bi-seal-invoke",
  /** Open, cancelled twice by the rows. */
  cancelTwice: "bi-cancel-twice",
  /** Created by the rows (201), then again (200 duplicate), then with another body (409). */
  duplicate: "bi-duplicate",
  /** Never exists: a well-formed id no group has. */
  missing: "bi-no-such-group",
} as const;

/** Requests refused whole carry this in every child: afterwards no item in the table may hold it. */
export const REFUSED_MARKER = "bad-input refused child";
/** Ids of creates that were refused: no item of theirs may exist. */
export const REFUSED_GROUP_IDS = [
  "bi-refused-mixed",
  "bi-refused-unique",
  "bi-refused-1001",
  "bi-refused-on-complete",
  "bi-refused-invoke",
] as const;

const echo = (payload: unknown = 1) => ({ kind: "echo", payload });
const marked = (i: number) => echo({ tag: REFUSED_MARKER, i });
/** partner-call wants `{ orderId: string }`: this one's issue is at `payload.orderId`. */
const badChild = { kind: "partner-call", payload: { orderId: 5, tag: REFUSED_MARKER } };
const onComplete = { kind: "echo" };

/** Creates the groups the rows count on; the succeeded one runs its child and completion job first. */
export async function prepareGroupFixtures(call: JsonCall): Promise<void> {
  const create = async (body: object) => {
    const r = await call("POST", "/groups", body);
    if (r.status !== 201) throw new Error(`fixture group not created: ${r.status} ${JSON.stringify(r.body)}`);
  };
  const open = { children: [], onComplete, sealed: false };
  await Promise.all([
    create({ id: GROUPS.succeeded, children: [echo("fixture")], onComplete }),
    create({ id: GROUPS.sealed, children: [{ kind: "echo", delaySeconds: 3600 }], onComplete }),
    create({ id: GROUPS.open, ...open }),
    create({ id: GROUPS.untouched, ...open }),
    create({ id: GROUPS.sealTwice, ...open }),
    create({ id: GROUPS.sealInvoke, ...open }),
    create({ id: GROUPS.cancelTwice, ...open }),
  ]);
  await waitFor(
    async () => (await call("GET", `/groups/${GROUPS.succeeded}`)).body.status === "succeeded",
    "the fixture group to succeed",
  );
}

const ok: BadExpect = { status: 200 };
const created: BadExpect = { status: 201 };
const invalid: BadExpect = { status: 400, code: "validation_error" };
const unknownKind: BadExpect = { status: 400, code: "unknown_kind" };
const notFound: BadExpect = { status: 404, code: "not_found" };
const conflict: BadExpect = { status: 409, code: "conflict" };

const create = (json: unknown): BadRequest => ({ method: "POST", path: "/groups", json });
const createRaw = (raw: string): BadRequest => ({ method: "POST", path: "/groups", raw });
const addTo = (id: string, json: unknown): BadRequest => ({
  method: "POST",
  path: `/groups/${id}/children`,
  json,
});
const children = (id: string, query: string): BadRequest => ({
  method: "GET",
  path: `/groups/${id}/children?${query}`,
});

const createCases: BadCase[] = [
  { name: "POST /groups without a body", request: { method: "POST", path: "/groups" }, expect: invalid },
  { name: "POST /groups truncated JSON", request: createRaw('{"onComplete":{"kind":"echo"}'), expect: invalid },
  { name: "POST /groups body null", request: createRaw("null"), expect: invalid },
  { name: "POST /groups body []", request: createRaw("[]"), expect: invalid },
  { name: "POST /groups body a string", request: createRaw('"echo"'), expect: invalid },
  { name: "POST /groups body {}", request: create({}), expect: invalid },
  { name: "POST /groups body 10 000 nested arrays", request: createRaw(nestedArrays(10_000)), expect: invalid },
  { name: "POST /groups without onComplete", request: create({ children: [echo()] }), expect: invalid },
  { name: "POST /groups onComplete a string", request: create({ onComplete: "echo" }), expect: invalid },
  {
    name: "POST /groups onComplete with an extra field",
    request: create({ onComplete: { kind: "echo", priority: "critical" } }),
    expect: invalid,
  },
  {
    name: "POST /groups onComplete an unknown kind",
    request: create({ id: "bi-refused-on-complete", children: [marked(0)], onComplete: { kind: "nope" } }),
    expect: unknownKind,
  },
  {
    name: "POST /groups onComplete on an undeclared queue",
    request: create({ onComplete: { kind: "echo", queue: "nope" } }),
    expect: invalid,
  },
  {
    name: "POST /groups onComplete a Lambda kind on the pool queue",
    request: create({ onComplete: { kind: "echo", queue: "heavy" } }),
    expect: invalid,
  },
  {
    name: "POST /groups onComplete payload 10 000 levels",
    request: createRaw(`{"onComplete":{"kind":"echo","payload":${nestedArrays(10_000)}}}`),
    expect: invalid,
  },
  {
    name: "POST /groups onComplete payload over 200 KB",
    request: create({ onComplete: { kind: "echo", payload: "x".repeat(210_000) } }),
    expect: { status: 413, code: "payload_too_large" },
  },
  { name: "POST /groups children a string", request: create({ children: "echo", onComplete }), expect: invalid },
  { name: "POST /groups children null", request: create({ children: null, onComplete }), expect: invalid },
  {
    name: "POST /groups 1001 children",
    request: create({
      id: "bi-refused-1001",
      children: Array.from({ length: 1001 }, (_, i) => marked(i)),
      onComplete,
    }),
    expect: invalid,
  },
  {
    name: "POST /groups one invalid child among valid ones",
    request: create({ id: "bi-refused-mixed", children: [marked(0), badChild, marked(2)], onComplete }),
    expect: invalid,
  },
  {
    name: "POST /groups a child with a uniqueKey",
    request: create({ id: "bi-refused-unique", children: [{ ...marked(0), uniqueKey: "k" }], onComplete }),
    expect: invalid,
  },
  {
    name: "POST /groups a child of an unknown kind",
    request: create({ children: [{ kind: "nope" }], onComplete }),
    expect: invalid,
  },
  { name: "POST /groups a child null", request: create({ children: [null], onComplete }), expect: invalid },
  {
    name: "POST /groups a child 10 000 levels deep",
    request: createRaw(`{"children":[{"kind":"echo","payload":${nestedArrays(10_000)}}],"onComplete":{"kind":"echo"}}`),
    expect: invalid,
  },
  {
    name: "POST /groups a child over 200 KB",
    request: create({ children: [echo("x".repeat(210_000))], onComplete }),
    expect: invalid,
  },
  { name: "POST /groups failure bogus", request: create({ onComplete, failure: "bogus" }), expect: invalid },
  { name: "POST /groups sealed a string", request: create({ onComplete, sealed: "yes" }), expect: invalid },
  ...[59, 7 * 24 * 3600 + 1, 90.5, "3600", 1e308].map((v) => ({
    name: `POST /groups expiresInSeconds ${JSON.stringify(v)}`,
    request: create({ onComplete, sealed: false, expiresInSeconds: v }),
    expect: invalid,
  })),
  { name: "POST /groups an extra field", request: create({ onComplete, extra: 1 }), expect: invalid },
  { name: "POST /groups id of 81 chars", request: create({ id: "g".repeat(81), onComplete }), expect: invalid },
  { name: "POST /groups id with a '#'", request: create({ id: "a#b", onComplete }), expect: invalid },
  { name: "POST /groups id a number", request: create({ id: 7, onComplete }), expect: invalid },
  ...oddNames.map((n) => ({
    name: `POST /groups id: ${n}`,
    request: create({ id: oddStrings[n], onComplete }),
    expect: invalid,
  })),
  ...oddNames.map((n) => ({
    name: `POST /groups onComplete kind: ${n}`,
    request: create({ onComplete: { kind: oddStrings[n] } }),
    expect: n === "empty" || n === "huge" ? invalid : unknownKind,
  })),
  ...oddNames.map((n) => ({
    name: `POST /groups child kind: ${n}`,
    request: create({ children: [{ kind: oddStrings[n] }], onComplete }),
    expect: invalid,
  })),
  {
    name: "POST /groups no children, sealed: completes at once",
    request: create({ children: [], onComplete }),
    expect: created,
  },
  {
    name: "POST /groups with an id",
    request: create({ id: GROUPS.duplicate, children: [echo("dup")], onComplete }),
    expect: created,
  },
  {
    name: "POST /groups the same request again is a duplicate",
    request: create({ id: GROUPS.duplicate, children: [echo("dup")], onComplete }),
    expect: ok,
  },
  {
    name: "POST /groups the same id with other children",
    request: create({ id: GROUPS.duplicate, children: [echo("other")], onComplete }),
    expect: conflict,
  },
  {
    name: "POST /groups the same id as a group made with other settings",
    request: create({ id: GROUPS.succeeded, children: [echo("fixture")], onComplete, failure: "terminate" }),
    expect: conflict,
  },
];

/** A path id this API never hands out: a 404 without a read (a lone surrogate can't even be decoded). */
const oddIdExpect = (n: OddString): BadExpect =>
  n.startsWith("lone") ? { status: [400, 404] } : n === "empty" ? { status: [400, 404, 405] } : notFound;

const pathRoutes: [method: string, suffix: string, json?: unknown][] = [
  ["GET", ""],
  ["GET", "/children"],
  ["POST", "/children", { children: [echo()] }],
  ["POST", "/seal"],
  ["POST", "/cancel"],
];

const pathIdCases: BadCase[] = pathRoutes.flatMap(([method, suffix, json]) => [
  ...oddNames.map((n) => ({
    name: `${method} /groups/{id}${suffix} id: ${n}`,
    request: { method, path: `/groups/${oddUrlParts[n]}${suffix}`, ...(json ? { json } : {}) },
    expect: oddIdExpect(n),
  })),
  {
    name: `${method} /groups/{id}${suffix} an unknown group`,
    request: { method, path: `/groups/${GROUPS.missing}${suffix}`, ...(json ? { json } : {}) },
    expect: notFound,
  },
  {
    name: `${method} /groups/{id}${suffix} id with a space`,
    request: { method, path: `/groups/a%20b${suffix}`, ...(json ? { json } : {}) },
    expect: notFound,
  },
  {
    name: `${method} /groups/{id}${suffix} id with a '#'`,
    request: { method, path: `/groups/${GROUPS.open}%23slice${suffix}`, ...(json ? { json } : {}) },
    expect: notFound,
  },
  {
    name: `${method} /groups/{id}${suffix} a malformed escape`,
    request: { method, path: `/groups/%ZZ${suffix}`, ...(json ? { json } : {}) },
    expect: invalid,
  },
]);

const listCases: BadCase[] = [
  { name: "GET /groups/{id}", request: { method: "GET", path: `/groups/${GROUPS.sealed}` }, expect: ok },
  ...[
    "status=bogus",
    "status=",
    "status=DONE",
    "limit=0",
    "limit=101",
    "limit=-1",
    "limit=1.5",
    "limit=abc",
    "limit=1e400",
    "cursor=abc",
    "cursor=-1",
    "cursor=1.5",
    "cursor=12345678",
    `cursor=${"9".repeat(3000)}`,
    "cursor=%ED%A0%80",
    "foo=1",
    "__proto__=1",
    "limit=1&limit=2",
  ].map((q) => ({
    name: `GET /groups/{id}/children ${q.length > 40 ? `${q.slice(0, 12)}… (${q.length} chars)` : q}`,
    request: children(GROUPS.sealed, q),
    expect: invalid,
  })),
  {
    name: "GET /groups/{id}/children a bad query on an unknown group",
    request: children(GROUPS.missing, "status=bogus"),
    expect: invalid,
  },
  ...["status=pending", "status=done&limit=1", "limit=100", "cursor=0", "cursor=9999999", "limit=1e2"].map((q) => ({
    name: `GET /groups/{id}/children ${q}`,
    request: children(GROUPS.sealed, q),
    expect: ok,
  })),
  {
    name: "GET /groups/{id}/children of a finished group",
    request: children(GROUPS.succeeded, "status=done"),
    expect: ok,
  },
];

const addCases: BadCase[] = [
  {
    name: "POST /groups/{id}/children without a body",
    request: { method: "POST", path: `/groups/${GROUPS.open}/children` },
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children truncated JSON",
    request: { method: "POST", path: `/groups/${GROUPS.open}/children`, raw: '{"children":[' },
    expect: invalid,
  },
  { name: "POST /groups/{id}/children {}", request: addTo(GROUPS.open, {}), expect: invalid },
  { name: "POST /groups/{id}/children children []", request: addTo(GROUPS.open, { children: [] }), expect: invalid },
  {
    name: "POST /groups/{id}/children 1001 children",
    request: addTo(GROUPS.untouched, { children: Array.from({ length: 1001 }, (_, i) => marked(i)) }),
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children one invalid child among valid ones",
    request: addTo(GROUPS.untouched, { children: [marked(0), badChild] }),
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children a child with a uniqueKey",
    request: addTo(GROUPS.untouched, { children: [{ ...marked(0), uniqueKey: "k" }] }),
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children seal a string",
    request: addTo(GROUPS.untouched, { children: [marked(0)], seal: "yes" }),
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children an extra field",
    request: addTo(GROUPS.untouched, { children: [marked(0)], onComplete }),
    expect: invalid,
  },
  {
    name: "POST /groups/{id}/children to a sealed group",
    request: addTo(GROUPS.sealed, { children: [marked(0)] }),
    expect: conflict,
  },
  {
    name: "POST /groups/{id}/children to a finished group",
    request: addTo(GROUPS.succeeded, { children: [marked(0)] }),
    expect: conflict,
  },
  {
    name: "POST /groups/{id}/children to an open group",
    request: addTo(GROUPS.open, { children: [echo(), echo({ s: "🚀\uFFFF\uD800" })] }),
    expect: ok,
  },
];

const transitionCases: BadCase[] = [
  ...[1, 2].map((n) => ({
    name: `POST /groups/{id}/seal an open group, call ${n}`,
    request: { method: "POST", path: `/groups/${GROUPS.sealTwice}/seal` },
    expect: ok,
  })),
  {
    name: "POST /groups/{id}/seal a finished group",
    request: { method: "POST", path: `/groups/${GROUPS.succeeded}/seal` },
    expect: ok,
  },
  {
    name: "POST /groups/{id}/seal with a body it ignores",
    request: { method: "POST", path: `/groups/${GROUPS.sealed}/seal`, raw: "not json" },
    expect: ok,
  },
  ...[1, 2].map((n) => ({
    name: `POST /groups/{id}/cancel an open group, call ${n}`,
    request: { method: "POST", path: `/groups/${GROUPS.cancelTwice}/cancel` },
    expect: ok,
  })),
  {
    name: "POST /groups/{id}/cancel a succeeded group",
    request: { method: "POST", path: `/groups/${GROUPS.succeeded}/cancel` },
    expect: conflict,
  },
  {
    name: "POST /groups/{id}/children to a cancelled group",
    request: addTo(GROUPS.cancelTwice, { children: [marked(0)] }),
    expect: conflict,
  },
  { name: "DELETE /groups/{id}", request: { method: "DELETE", path: `/groups/${GROUPS.open}` }, expect: { status: 405, code: "method_not_allowed" } },
  { name: "GET /groups", request: { method: "GET", path: "/groups" }, expect: { status: 405, code: "method_not_allowed" } },
  {
    name: "GET /groups/{id}/seal",
    request: { method: "GET", path: `/groups/${GROUPS.open}/seal` },
    expect: { status: 405, code: "method_not_allowed" },
  },
];

/** The three group shapes of Invoke, each row sent through the SDK and a raw fetch, as invoke-cases.ts does. */
interface InvokeRow {
  name: string;
  event: unknown;
  /** The Invoke answer's error code; undefined: accepted (a GroupView comes back). */
  code?: ErrorCode;
}

const invokeRows: InvokeRow[] = [
  { name: "group: a new group", event: { group: { children: [echo("invoke")], onComplete } } },
  { name: "group: null", event: { group: null }, code: "validation_error" },
  { name: "group: {}", event: { group: {} }, code: "validation_error" },
  { name: "group: an extra top-level field", event: { group: { onComplete }, extra: 1 }, code: "validation_error" },
  {
    name: "group and sealGroup together",
    event: { group: { onComplete }, sealGroup: { groupId: GROUPS.open } },
    code: "validation_error",
  },
  {
    name: "group: 1001 children",
    event: { group: { children: Array.from({ length: 1001 }, (_, i) => marked(i)), onComplete } },
    code: "validation_error",
  },
  {
    name: "group: onComplete an unknown kind",
    event: { group: { children: [marked(0)], onComplete: { kind: "nope" } } },
    code: "unknown_kind",
  },
  {
    name: "group: one invalid child among valid ones",
    event: { group: { id: "bi-refused-invoke", children: [marked(0), badChild, marked(2)], onComplete } },
    code: "validation_error",
  },
  {
    name: "group: a child with a uniqueKey",
    event: { group: { children: [{ ...marked(0), uniqueKey: "k" }], onComplete } },
    code: "validation_error",
  },
  { name: "group: an id of 81 chars", event: { group: { id: "g".repeat(81), onComplete } }, code: "validation_error" },
  {
    name: "group: the same request as an existing group is a duplicate",
    event: { group: { id: GROUPS.duplicate, children: [echo("dup")], onComplete } },
  },
  {
    name: "group: an existing id with other children",
    event: { group: { id: GROUPS.duplicate, children: [echo("another")], onComplete } },
    code: "conflict",
  },
  { name: "groupChildren: null", event: { groupChildren: null }, code: "validation_error" },
  { name: "groupChildren: no groupId", event: { groupChildren: { children: [echo()] } }, code: "validation_error" },
  {
    name: "groupChildren: groupId a number",
    event: { groupChildren: { groupId: 7, children: [echo()] } },
    code: "validation_error",
  },
  {
    name: "groupChildren: an id this API never hands out",
    event: { groupChildren: { groupId: "a b", children: [echo()] } },
    code: "not_found",
  },
  {
    name: "groupChildren: an unknown group",
    event: { groupChildren: { groupId: GROUPS.missing, children: [echo()] } },
    code: "not_found",
  },
  {
    name: "groupChildren: children []",
    event: { groupChildren: { groupId: GROUPS.open, children: [] } },
    code: "validation_error",
  },
  {
    name: "groupChildren: one invalid child among valid ones",
    event: { groupChildren: { groupId: GROUPS.untouched, children: [marked(0), badChild] } },
    code: "validation_error",
  },
  {
    name: "groupChildren: seal a string",
    event: { groupChildren: { groupId: GROUPS.untouched, children: [marked(0)], seal: "yes" } },
    code: "validation_error",
  },
  {
    name: "groupChildren: an extra field",
    event: { groupChildren: { groupId: GROUPS.untouched, children: [marked(0)], extra: 1 } },
    code: "validation_error",
  },
  {
    name: "groupChildren: to a sealed group",
    event: { groupChildren: { groupId: GROUPS.sealed, children: [marked(0)] } },
    code: "conflict",
  },
  { name: "groupChildren: to an open group", event: { groupChildren: { groupId: GROUPS.open, children: [echo()] } } },
  { name: "sealGroup: {}", event: { sealGroup: {} }, code: "validation_error" },
  { name: "sealGroup: groupId null", event: { sealGroup: { groupId: null } }, code: "validation_error" },
  { name: "sealGroup: an id this API never hands out", event: { sealGroup: { groupId: "x".repeat(3000) } }, code: "not_found" },
  { name: "sealGroup: an unknown group", event: { sealGroup: { groupId: GROUPS.missing } }, code: "not_found" },
  { name: "sealGroup: an open group (twice: idempotent)", event: { sealGroup: { groupId: GROUPS.sealInvoke } } },
  { name: "sealGroup: a finished group", event: { sealGroup: { groupId: GROUPS.succeeded } } },
];

const invokeCases: BadCase[] = invokeRows.flatMap((row) =>
  (["sdk", "fetch"] as const).map((via) => ({
    name: `Invoke (${via}) ${row.name}`,
    request: { invoke: via, payload: JSON.stringify(row.event) },
    expect: row.code ? { code: row.code } : {},
  })),
);

export const groupCases: BadCase[] = [
  ...createCases,
  ...pathIdCases,
  ...listCases,
  ...addCases,
  ...transitionCases,
  ...invokeCases,
];
