import type { BadCase, BadExpect, BadRequest } from "./case.ts";
import { nestedArrays, oddNames, oddStrings } from "./case.ts";
import { badChild, echo, GROUPS, marked, onComplete } from "./group-fixtures.ts";
import { groupIdRouteCases } from "./group-id-route-cases.ts";
import { groupInvokeCases } from "./group-invoke-cases.ts";

/**
 * Job groups: POST /groups here, the /groups/{id} routes and the group shapes of Invoke in their own
 * files. The groups in GROUPS are made before the rows run (prepareGroupFixtures); the rows run in
 * order, so a row may count on an earlier one (the first create of an id, then its duplicate).
 */

const ok: BadExpect = { status: 200 };
const created: BadExpect = { status: 201 };
const invalid: BadExpect = { status: 400, code: "validation_error" };
const unknownKind: BadExpect = { status: 400, code: "unknown_kind" };
const conflict: BadExpect = { status: 409, code: "conflict" };

const create = (json: unknown): BadRequest => ({ method: "POST", path: "/groups", json });
const createRaw = (raw: string): BadRequest => ({ method: "POST", path: "/groups", raw });

const createCases: BadCase[] = [
  { name: "POST /groups without a body", request: { method: "POST", path: "/groups" }, expect: invalid },
  {
    name: "POST /groups truncated JSON",
    request: createRaw('{"onComplete":{"kind":"echo"}'),
    expect: invalid,
  },
  { name: "POST /groups body null", request: createRaw("null"), expect: invalid },
  { name: "POST /groups body []", request: createRaw("[]"), expect: invalid },
  { name: "POST /groups body a string", request: createRaw('"echo"'), expect: invalid },
  { name: "POST /groups body {}", request: create({}), expect: invalid },
  {
    name: "POST /groups body 10 000 nested arrays",
    request: createRaw(nestedArrays(10_000)),
    expect: invalid,
  },
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
    name: "POST /groups onComplete payload over 1 MiB",
    request: create({ onComplete: { kind: "echo", payload: "x".repeat(1_050_000) } }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "POST /groups children a string",
    request: create({ children: "echo", onComplete }),
    expect: invalid,
  },
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
    request: createRaw(
      `{"children":[{"kind":"echo","payload":${nestedArrays(10_000)}}],"onComplete":{"kind":"echo"}}`,
    ),
    expect: invalid,
  },
  {
    name: "POST /groups a child over 1 MiB",
    request: create({ children: [echo("x".repeat(1_050_000))], onComplete }),
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
  {
    name: "POST /groups id of 81 chars",
    request: create({ id: "g".repeat(81), onComplete }),
    expect: invalid,
  },
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

export const groupCases: BadCase[] = [...createCases, ...groupIdRouteCases, ...groupInvokeCases];
