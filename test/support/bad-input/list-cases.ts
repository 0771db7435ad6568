import type { BadCase, BadExpect } from "./case.ts";
import { cursorOf, cursorOfText, nestedArrays, oddNames, oddUrlParts } from "./case.ts";

/** GET /jobs: every query parameter, and cursors of every wrong shape on both read paths. */

const ok: BadExpect = { status: 200 };
const invalid: BadExpect = { status: 400, code: "validation_error" };
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
  { name: "GET /jobs an empty cursor is no cursor", request: list("cursor="), expect: ok },
  ...["0", "101", "-1", "1.5", "abc", "Infinity", "NaN", "1e400", "0x10"].map((v) => ({
    name: `GET /jobs limit=${v}`,
    request: list(`limit=${encodeURIComponent(v)}`),
    expect: v === "0x10" ? ok : invalid,
  })),
  { name: "GET /jobs limit=1e2", request: list("limit=1e2"), expect: ok },
  { name: "GET /jobs an unknown parameter", request: list("foo=1"), expect: invalid },
  { name: "GET /jobs status=scheduled without a queue", request: list("status=scheduled"), expect: ok },
  { name: "GET /jobs queue and status=dead", request: list("queue=heavy&status=dead"), expect: ok },
  { name: "GET /jobs an undeclared queue", request: list("queue=nope&status=dead"), expect: ok },
  { name: "GET /jobs queue of 41 chars", request: list(`queue=${"q".repeat(41)}`), expect: invalid },
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
  {
    name: "GET /jobs a real index cursor",
    request: (f) => list(`queue=default&status=scheduled&limit=1&cursor=${f.indexCursor}`),
    expect: ok,
  },
  {
    name: "GET /jobs a real scan cursor",
    request: (f) => list(`limit=1&cursor=${f.scanCursor}`),
    expect: ok,
  },
  {
    name: "GET /jobs an index cursor on the scan path",
    request: (f) => list(`limit=1&cursor=${f.indexCursor}`),
    expect: invalid,
  },
  {
    name: "GET /jobs a scan cursor on the index path",
    request: (f) => list(`queue=default&status=scheduled&cursor=${f.scanCursor}`),
    expect: invalid,
  },
  {
    name: "GET /jobs an index cursor for another status",
    request: (f) => list(`queue=default&status=dead&cursor=${f.indexCursor}`),
    expect: invalid,
  },
];

export const listCases: BadCase[] = [...paramCases, ...cursorCases];
