import { invalid, ok } from "./answers.ts";
import type { BadCase } from "./case.ts";
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
  ...(["tag", "kind", "key", "error"] as const).flatMap((param) =>
    oddNames.map((n) => ({
      name: `GET /jobs ${param}: ${n}`,
      request: list(`${param}=${oddUrlParts[n]}`),
      // Any text is a value to look for, but none or more than the field's length (a lone
      // surrogate's WTF-8 bytes decode to U+FFFD, a character like any other).
      expect: n === "empty" || n === "huge" ? invalid : ok,
    })),
  ),
  ...(["createdAfter", "createdBefore"] as const).flatMap((param) =>
    ["yesterday", "2026-02-30T00:00:00Z", "2026-01-01T00:00:00", "1767225600000", ""].map((v) => ({
      name: `GET /jobs ${param}=${v}`,
      request: list(`${param}=${encodeURIComponent(v)}`),
      expect: invalid,
    })),
  ),
  badCase("GET /jobs a tag of 64 characters", list(`tag=${"t".repeat(64)}`), ok),
  badCase("GET /jobs a tag of 65 characters", list(`tag=${"t".repeat(65)}`), invalid),
  badCase(
    "GET /jobs createdAfter after createdBefore",
    list("createdAfter=2026-01-02T00:00:00Z&createdBefore=2026-01-01T00:00:00Z"),
    invalid,
  ),
  badCase(
    "GET /jobs createdAfter equal to createdBefore (an empty window)",
    list("createdAfter=2026-01-01T00:00:00Z&createdBefore=2026-01-01T00:00:00Z"),
    ok,
  ),
  badCase(
    "GET /jobs every filter at once",
    list(
      "tag=a&kind=echo&status=dead&key=k&error=e&queue=default&createdAfter=2026-01-01T00:00:00%2B02:00&createdBefore=2030-01-01T00:00:00Z",
    ),
    ok,
  ),
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
const place = `000001700000000#${id}`;

/** Cursors of every wrong shape; a cursor is `{ q, after }`: its search's digest and where it stopped. */
const cursors: [string, string][] = [
  ["null", cursorOf(null)],
  ["a number", cursorOf(1)],
  ["a string", cursorOf("cursor")],
  ["an array", cursorOf([])],
  ["{}", cursorOf({})],
  ["no digest", cursorOf({ after: place })],
  ["a digest of the wrong length", cursorOf({ q: "abc", after: place })],
  ["a digest of another search", cursorOf({ q: "A".repeat(22), after: place })],
  ["after null", cursorOf({ q: "A".repeat(22), after: null })],
  ["after a number", cursorOf({ q: "A".repeat(22), after: 1 })],
  ["after not a place", cursorOf({ q: "A".repeat(22), after: "job#x" })],
  ["after with a lone surrogate", cursorOf({ q: "A".repeat(22), after: `000001700000000#\uD800` })],
  ["after of 3 000 chars", cursorOf({ q: "A".repeat(22), after: `000001700000000#${"x".repeat(3000)}` })],
  ["an extra attribute", cursorOf({ q: "A".repeat(22), after: place, extra: 1 })],
  ["__proto__", cursorOfText(`{"q":"${"A".repeat(22)}","after":"${place}","__proto__":{"polluted":1}}`)],
  ["an old index cursor", cursorOf({ shard: 2, key: { pk: `job#${id}`, sk: "job" } })],
  ["an old scan cursor", cursorOf({ key: { pk: `job#${id}`, sk: "job" } })],
  ["not base64", "%25%25%25"],
  ["base64 of text", cursorOfText("not json")],
  ["base64 of 500 nested arrays", cursorOfText(nestedArrays(500))],
  ["10 KB of base64", "A".repeat(10_000)],
];

const searches = ["queue=default&status=dead&limit=5", "status=queued&limit=5", "tag=order-42&limit=5"];

const cursorCases: BadCase[] = [
  ...searches.flatMap((search) =>
    cursors.map(([name, cursor]) => ({
      name: `GET /jobs?${search} cursor: ${name}`,
      request: list(`${search}&cursor=${cursor}`),
      expect: invalid,
    })),
  ),
  badCase(
    "GET /jobs a real cursor, with its own search",
    (f) => list(`queue=default&status=scheduled&limit=1&cursor=${f.indexCursor}`),
    ok,
  ),
  badCase(
    "GET /jobs another real cursor, with its own search",
    (f) => list(`limit=1&cursor=${f.scanCursor}`),
    ok,
  ),
  badCase(
    "GET /jobs a cursor of another search (no filters)",
    (f) => list(`limit=1&cursor=${f.indexCursor}`),
    invalid,
  ),
  badCase(
    "GET /jobs a cursor of another search (filters)",
    (f) => list(`queue=default&status=scheduled&cursor=${f.scanCursor}`),
    invalid,
  ),
  badCase(
    "GET /jobs a cursor of another status",
    (f) => list(`queue=default&status=dead&cursor=${f.indexCursor}`),
    invalid,
  ),
  badCase(
    "GET /jobs a cursor with another tag",
    (f) => list(`queue=default&status=scheduled&tag=x&limit=1&cursor=${f.indexCursor}`),
    invalid,
  ),
];

export const listCases: BadCase[] = [...paramCases, ...cursorCases];
