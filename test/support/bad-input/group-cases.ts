import { conflict, created, invalid, ok, unknownKind } from "./answers.ts";
import type { BadCase, BadRequest } from "./case.ts";
import { badCase, nestedArrays, oddNames, oddStrings, unusableBodies } from "./case.ts";
import { badChild, echo, GROUPS, marked, onComplete } from "./group-fixtures.ts";
import { groupIdRouteCases } from "./group-id-route-cases.ts";
import { groupInvokeCases } from "./group-invoke-cases.ts";

/**
 * Job groups: POST /groups here, the /groups/{id} routes and the group shapes of Invoke in their own
 * files. The groups in GROUPS are made before the rows run (prepareGroupFixtures); the rows run in
 * order, so a row may count on an earlier one (the first create of an id, then its duplicate).
 */

const create = (json: unknown): BadRequest => ({ method: "POST", path: "/groups", json });
const createRaw = (raw: string): BadRequest => ({ method: "POST", path: "/groups", raw });

const createCases: BadCase[] = [
  ...unusableBodies("/groups"),
  badCase("POST /groups truncated JSON", createRaw('{"onComplete":{"kind":"echo"}'), invalid),
  badCase("POST /groups body 10 000 nested arrays", createRaw(nestedArrays(10_000)), invalid),
  badCase("POST /groups without onComplete", create({ children: [echo()] }), invalid),
  badCase("POST /groups onComplete a string", create({ onComplete: "echo" }), invalid),
  badCase(
    "POST /groups onComplete with an extra field",
    create({ onComplete: { kind: "echo", priority: "critical" } }),
    invalid,
  ),
  badCase(
    "POST /groups onComplete an unknown kind",
    create({ id: "bi-refused-on-complete", children: [marked(0)], onComplete: { kind: "nope" } }),
    unknownKind,
  ),
  badCase(
    "POST /groups onComplete on an undeclared queue",
    create({ onComplete: { kind: "echo", queue: "nope" } }),
    invalid,
  ),
  badCase(
    "POST /groups onComplete a Lambda kind on the pool queue",
    create({ onComplete: { kind: "echo", queue: "heavy" } }),
    invalid,
  ),
  badCase(
    "POST /groups onComplete payload 10 000 levels",
    createRaw(`{"onComplete":{"kind":"echo","payload":${nestedArrays(10_000)}}}`),
    invalid,
  ),
  badCase(
    "POST /groups onComplete payload over 1 MiB",
    create({ onComplete: { kind: "echo", payload: "x".repeat(1_050_000) } }),
    { status: 413, code: "payload_too_large" },
  ),
  badCase("POST /groups children a string", create({ children: "echo", onComplete }), invalid),
  badCase("POST /groups children null", create({ children: null, onComplete }), invalid),
  {
    name: "POST /groups 1001 children",
    request: create({
      id: "bi-refused-1001",
      children: Array.from({ length: 1001 }, (_, i) => marked(i)),
      onComplete,
    }),
    expect: invalid,
  },
  badCase(
    "POST /groups one invalid child among valid ones",
    create({ id: "bi-refused-mixed", children: [marked(0), badChild, marked(2)], onComplete }),
    invalid,
  ),
  badCase(
    "POST /groups a child with a uniqueKey",
    create({ id: "bi-refused-unique", children: [{ ...marked(0), uniqueKey: "k" }], onComplete }),
    invalid,
  ),
  badCase(
    "POST /groups a child of an unknown kind",
    create({ children: [{ kind: "nope" }], onComplete }),
    invalid,
  ),
  badCase("POST /groups a child null", create({ children: [null], onComplete }), invalid),
  {
    name: "POST /groups a child 10 000 levels deep",
    request: createRaw(
      `{"children":[{"kind":"echo","payload":${nestedArrays(10_000)}}],"onComplete":{"kind":"echo"}}`,
    ),
    expect: invalid,
  },
  badCase(
    "POST /groups a child over 1 MiB",
    create({ children: [echo("x".repeat(1_050_000))], onComplete }),
    invalid,
  ),
  badCase("POST /groups failure bogus", create({ onComplete, failure: "bogus" }), invalid),
  badCase("POST /groups sealed a string", create({ onComplete, sealed: "yes" }), invalid),
  ...[59, 7 * 24 * 3600 + 1, 90.5, "3600", 1e308].map((v) => ({
    name: `POST /groups expiresInSeconds ${JSON.stringify(v)}`,
    request: create({ onComplete, sealed: false, expiresInSeconds: v }),
    expect: invalid,
  })),
  badCase("POST /groups an extra field", create({ onComplete, extra: 1 }), invalid),
  badCase("POST /groups id of 81 chars", create({ id: "g".repeat(81), onComplete }), invalid),
  badCase("POST /groups id with a '#'", create({ id: "a#b", onComplete }), invalid),
  badCase("POST /groups id a number", create({ id: 7, onComplete }), invalid),
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
  badCase(
    "POST /groups no children, sealed: completes at once",
    create({ children: [], onComplete }),
    created,
  ),
  badCase(
    "POST /groups with an id",
    create({ id: GROUPS.duplicate, children: [echo("dup")], onComplete }),
    created,
  ),
  badCase(
    "POST /groups the same request again is a duplicate",
    create({ id: GROUPS.duplicate, children: [echo("dup")], onComplete }),
    ok,
  ),
  badCase(
    "POST /groups the same id with other children",
    create({ id: GROUPS.duplicate, children: [echo("other")], onComplete }),
    conflict,
  ),
  badCase(
    "POST /groups the same id as a group made with other settings",
    create({ id: GROUPS.succeeded, children: [echo("fixture")], onComplete, failure: "terminate" }),
    conflict,
  ),
];

export const groupCases: BadCase[] = [...createCases, ...groupIdRouteCases, ...groupInvokeCases];
