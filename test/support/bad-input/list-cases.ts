import { invalid, ok } from "./answers.ts";
import type { BadCase, BadExpect } from "./case.ts";
import { badCase, cursorOf, cursorOfText, nestedArrays, oddNames, oddUrlParts } from "./case.ts";

/** GET /jobs: every query parameter, and cursors of every wrong shape on both read paths. */

const list = (query: string) => ({ method: "GET", path: `/jobs?${query}` });

const paramCases: BadCase[] = [
  ...(["queue", "status", "limit"] as const).flatMap((param) =>
    oddNames.map((n) => ({
      name: `GET /jobs ${param}: ${n}`,
      request: list(`${param}=${oddUrlParts[n]}`),
      expect: invalid,
    })),
  ),
  ...oddNames
    .filter((n) => n !== "empty")
    .map((n) => ({
      name: `GET /jobs cursor: ${n}`,
      request: list(`cursor=${oddUrlParts[n]}`),
      expect: invalid,
    })),
  badCase("GET /jobs an empty cursor is no cursor", list("cursor="), ok),
  ...["0", "101", "-1", "1.5", "abc", "Infinity", "NaN", "1e400", "0x10"].map((v) => ({
    name: `GET /jobs limit=${v}`,
    request: list(`limit=${encodeURIComponent(v)}`),
    expect: v === "0x10" ? ok : invalid,
  })),
  badCase("GET /jobs limit=1e2", list("limit=1e2"), ok),
  badCase("GET /jobs an unknown parameter", list("foo=1"), invalid),
  badCase("GET /jobs status=scheduled without a queue", list("status=scheduled"), ok),
  badCase("GET /jobs queue and status=dead", list("queue=heavy&status=dead"), ok),
  badCase("GET /jobs an undeclared queue", list("queue=nope&status=dead"), ok),
  badCase("GET /jobs queue of 41 chars", list(`queue=${"q".repeat(41)}`), invalid),
];

const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const indexKey = (shard: number) => ({
  pk: `job#${id}`,
  sk: "job",
  gsi1pk: `default#dead#${shard}`,
  gsi1sk: `000001700000000#${id}`,
});

/** Cursors for the sharded index path (queue + status=dead). */
const indexCursors: [string, string, BadExpect?][] = [
  ["null", cursorOf(null)],
  ["a number", cursorOf(1)],
  ["a string", cursorOf("cursor")],
  ["an array", cursorOf([])],
  ["{}", cursorOf({})],
  ["shard -1", cursorOf({ shard: -1 })],
  ["shard -1e308", cursorOf({ shard: -1e308 })],
  ["shard 1e308", cursorOf({ shard: 1e308 })],
  ["shard 8, past the last", cursorOf({ shard: 8 })],
  ["shard 1.5", cursorOf({ shard: 1.5 })],
  ["shard a string", cursorOf({ shard: "0" })],
  ["shard null", cursorOf({ shard: null })],
  ["an extra attribute", cursorOf({ shard: 0, extra: 1 })],
  ["__proto__", cursorOfText('{"shard":0,"__proto__":{"polluted":1}}')],
  ["key null", cursorOf({ shard: 0, key: null })],
  ["key {}", cursorOf({ shard: 0, key: {} })],
  [
    "a foreign key (another queue's partition)",
    cursorOf({ shard: 0, key: { ...indexKey(0), gsi1pk: "heavy#dead#0" } }),
  ],
  ["a key of another shard", cursorOf({ shard: 3, key: indexKey(0) })],
  ["a key with an extra attribute", cursorOf({ shard: 0, key: { ...indexKey(0), extra: "x" } })],
  ["a key with numbers", cursorOf({ shard: 0, key: { pk: 1, sk: 2, gsi1pk: 3, gsi1sk: 4 } })],
  [
    "a key in DynamoDB's wire shape",
    cursorOf({ shard: 0, key: { pk: { S: `job#${id}` }, sk: { S: "job" } } }),
  ],
  ["a scan key", cursorOf({ shard: 0, key: { pk: `job#${id}`, sk: "job" } })],
  ["a key with a lone surrogate", cursorOf({ shard: 0, key: { ...indexKey(0), gsi1sk: "\uD800" } })],
  ["a key of 3 000 chars", cursorOf({ shard: 0, key: { ...indexKey(0), pk: `job#${"x".repeat(3000)}` } })],
  ["not base64", "%25%25%25"],
  ["base64 of text", cursorOfText("not json")],
  ["base64 of 500 nested arrays", cursorOfText(nestedArrays(500))],
  ["10 KB of base64", "A".repeat(10_000)],
  ["a key of the right shape", cursorOf({ shard: 2, key: indexKey(2) }), ok],
  ["shard 5 and no key", cursorOf({ shard: 5 }), ok],
];

/** Cursors for the scan path (status=queued). Any item can end a scan page, so any table key is fine. */
const scanCursors: [string, string, BadExpect?][] = [
  ["null", cursorOf(null)],
  ["{}", cursorOf({})],
  ["key null", cursorOf({ key: null })],
  ["a key without sk", cursorOf({ key: { pk: "x" } })],
  ["a foreign key shape", cursorOf({ key: { id: "x" } })],
  ["an index key", cursorOf({ key: indexKey(0) })],
  ["a key with numbers", cursorOf({ key: { pk: 1, sk: 2 } })],
  ["a key of empty strings", cursorOf({ key: { pk: "", sk: "" } })],
  ["a key of 3 000 chars", cursorOf({ key: { pk: "x".repeat(3000), sk: "job" } })],
  ["a key with a lone surrogate", cursorOf({ key: { pk: "job#\uDC00", sk: "job" } })],
  ["an extra attribute", cursorOf({ key: { pk: `job#${id}`, sk: "job" }, shard: 0 })],
  ["an index cursor", cursorOf({ shard: 0 })],
  ["the key of a queue item", cursorOf({ key: { pk: "queue#default", sk: "state" } }), ok],
  ["a job key", cursorOf({ key: { pk: `job#${id}`, sk: "job" } }), ok],
];

const cursorCases: BadCase[] = [
  ...indexCursors.map(([name, cursor, expect]) => ({
    name: `GET /jobs index cursor: ${name}`,
    request: list(`queue=default&status=dead&limit=5&cursor=${cursor}`),
    expect: expect ?? invalid,
  })),
  ...scanCursors.map(([name, cursor, expect]) => ({
    name: `GET /jobs scan cursor: ${name}`,
    request: list(`status=queued&limit=5&cursor=${cursor}`),
    expect: expect ?? invalid,
  })),
  badCase(
    "GET /jobs a real index cursor",
    (f) => list(`queue=default&status=scheduled&limit=1&cursor=${f.indexCursor}`),
    ok,
  ),
  badCase("GET /jobs a real scan cursor", (f) => list(`limit=1&cursor=${f.scanCursor}`), ok),
  badCase(
    "GET /jobs an index cursor on the scan path",
    (f) => list(`limit=1&cursor=${f.indexCursor}`),
    invalid,
  ),
  badCase(
    "GET /jobs a scan cursor on the index path",
    (f) => list(`queue=default&status=scheduled&cursor=${f.scanCursor}`),
    invalid,
  ),
  badCase(
    "GET /jobs an index cursor for another status",
    (f) => list(`queue=default&status=dead&cursor=${f.indexCursor}`),
    invalid,
  ),
];

export const listCases: BadCase[] = [...paramCases, ...cursorCases];
