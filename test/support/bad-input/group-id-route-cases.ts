import { conflict, invalid, notFound, ok } from "./answers.ts";
import type { BadCase, BadExpect, BadRequest, OddString } from "./case.ts";
import { badCase, oddNames, oddUrlParts } from "./case.ts";
import { badChild, echo, GROUPS, marked, onComplete } from "./group-fixtures.ts";

/** GET /groups/{id}, its children (list and add), seal and cancel: ids, queries, bodies and states. */

const addTo = (id: string, json: unknown): BadRequest => ({
  method: "POST",
  path: `/groups/${id}/children`,
  json,
});
const children = (id: string, query: string): BadRequest => ({
  method: "GET",
  path: `/groups/${id}/children?${query}`,
});

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
  badCase(
    `${method} /groups/{id}${suffix} an unknown group`,
    { method, path: `/groups/${GROUPS.missing}${suffix}`, ...(json ? { json } : {}) },
    notFound,
  ),
  badCase(
    `${method} /groups/{id}${suffix} id with a space`,
    { method, path: `/groups/a%20b${suffix}`, ...(json ? { json } : {}) },
    notFound,
  ),
  badCase(
    `${method} /groups/{id}${suffix} id with a '#'`,
    { method, path: `/groups/${GROUPS.open}%23slice${suffix}`, ...(json ? { json } : {}) },
    notFound,
  ),
  badCase(
    `${method} /groups/{id}${suffix} a malformed escape`,
    { method, path: `/groups/%ZZ${suffix}`, ...(json ? { json } : {}) },
    invalid,
  ),
]);

const listCases: BadCase[] = [
  badCase("GET /groups/{id}", { method: "GET", path: `/groups/${GROUPS.sealed}` }, ok),
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
    "cursor=0.99",
    "cursor=1.2.3",
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
  badCase(
    "GET /groups/{id}/children a bad query on an unknown group",
    children(GROUPS.missing, "status=bogus"),
    invalid,
  ),
  ...["status=pending", "status=done&limit=1", "limit=100", "cursor=0", "cursor=9999999", "limit=1e2"].map(
    (q) => ({
      name: `GET /groups/{id}/children ${q}`,
      request: children(GROUPS.sealed, q),
      expect: ok,
    }),
  ),
  badCase("GET /groups/{id}/children of a finished group", children(GROUPS.succeeded, "status=done"), ok),
];

const addCases: BadCase[] = [
  badCase(
    "POST /groups/{id}/children without a body",
    { method: "POST", path: `/groups/${GROUPS.open}/children` },
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children truncated JSON",
    { method: "POST", path: `/groups/${GROUPS.open}/children`, raw: '{"children":[' },
    invalid,
  ),
  badCase("POST /groups/{id}/children {}", addTo(GROUPS.open, {}), invalid),
  badCase("POST /groups/{id}/children children []", addTo(GROUPS.open, { children: [] }), invalid),
  badCase(
    "POST /groups/{id}/children 1001 children",
    addTo(GROUPS.untouched, { children: Array.from({ length: 1001 }, (_, i) => marked(i)) }),
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children one invalid child among valid ones",
    addTo(GROUPS.untouched, { children: [marked(0), badChild] }),
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children a child with a uniqueKey",
    addTo(GROUPS.untouched, { children: [{ ...marked(0), uniqueKey: "k" }] }),
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children seal a string",
    addTo(GROUPS.untouched, { children: [marked(0)], seal: "yes" }),
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children an extra field",
    addTo(GROUPS.untouched, { children: [marked(0)], onComplete }),
    invalid,
  ),
  badCase(
    "POST /groups/{id}/children to a sealed group",
    addTo(GROUPS.sealed, { children: [marked(0)] }),
    conflict,
  ),
  badCase(
    "POST /groups/{id}/children to a finished group",
    addTo(GROUPS.succeeded, { children: [marked(0)] }),
    conflict,
  ),
  badCase(
    "POST /groups/{id}/children to an open group",
    addTo(GROUPS.open, { children: [echo(), echo({ s: "🚀\uFFFF\uD800" })] }),
    ok,
  ),
];

const transitionCases: BadCase[] = [
  ...[1, 2].map((n) => ({
    name: `POST /groups/{id}/seal an open group, call ${n}`,
    request: { method: "POST", path: `/groups/${GROUPS.sealTwice}/seal` },
    expect: ok,
  })),
  badCase(
    "POST /groups/{id}/seal a finished group",
    { method: "POST", path: `/groups/${GROUPS.succeeded}/seal` },
    ok,
  ),
  badCase(
    "POST /groups/{id}/seal with a body it ignores",
    { method: "POST", path: `/groups/${GROUPS.sealed}/seal`, raw: "not json" },
    ok,
  ),
  ...[1, 2].map((n) => ({
    name: `POST /groups/{id}/cancel an open group, call ${n}`,
    request: { method: "POST", path: `/groups/${GROUPS.cancelTwice}/cancel` },
    expect: ok,
  })),
  badCase(
    "POST /groups/{id}/cancel a succeeded group",
    { method: "POST", path: `/groups/${GROUPS.succeeded}/cancel` },
    conflict,
  ),
  badCase(
    "POST /groups/{id}/children to a cancelled group",
    addTo(GROUPS.cancelTwice, { children: [marked(0)] }),
    conflict,
  ),
  badCase(
    "DELETE /groups/{id}",
    { method: "DELETE", path: `/groups/${GROUPS.open}` },
    { status: 405, code: "method_not_allowed" },
  ),
  badCase("GET /groups", { method: "GET", path: "/groups" }, { status: 405, code: "method_not_allowed" }),
  badCase(
    "GET /groups/{id}/seal",
    { method: "GET", path: `/groups/${GROUPS.open}/seal` },
    { status: 405, code: "method_not_allowed" },
  ),
];

export const groupIdRouteCases: BadCase[] = [...pathIdCases, ...listCases, ...addCases, ...transitionCases];
