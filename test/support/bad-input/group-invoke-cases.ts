import type { ErrorCode } from "../../../lib/errors.ts";
import type { BadCase } from "./case.ts";
import { badChild, echo, GROUPS, marked, onComplete } from "./group-fixtures.ts";

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
  {
    name: "group: an extra top-level field",
    event: { group: { onComplete }, extra: 1 },
    code: "validation_error",
  },
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
  {
    name: "group: an id of 81 chars",
    event: { group: { id: "g".repeat(81), onComplete } },
    code: "validation_error",
  },
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
  {
    name: "groupChildren: no groupId",
    event: { groupChildren: { children: [echo()] } },
    code: "validation_error",
  },
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
  {
    name: "groupChildren: to an open group",
    event: { groupChildren: { groupId: GROUPS.open, children: [echo()] } },
  },
  { name: "sealGroup: {}", event: { sealGroup: {} }, code: "validation_error" },
  { name: "sealGroup: groupId null", event: { sealGroup: { groupId: null } }, code: "validation_error" },
  {
    name: "sealGroup: an id this API never hands out",
    event: { sealGroup: { groupId: "x".repeat(3000) } },
    code: "not_found",
  },
  {
    name: "sealGroup: an unknown group",
    event: { sealGroup: { groupId: GROUPS.missing } },
    code: "not_found",
  },
  {
    name: "sealGroup: an open group (twice: idempotent)",
    event: { sealGroup: { groupId: GROUPS.sealInvoke } },
  },
  { name: "sealGroup: a finished group", event: { sealGroup: { groupId: GROUPS.succeeded } } },
];

export const groupInvokeCases: BadCase[] = invokeRows.flatMap((row) =>
  (["sdk", "fetch"] as const).map((via) => ({
    name: `Invoke (${via}) ${row.name}`,
    request: { invoke: via, payload: JSON.stringify(row.event) },
    expect: row.code ? { code: row.code } : {},
  })),
);
