import type { ErrorCode } from "../../../lib/errors.ts";
import { type BadCase, type BadExpect, nestedArrays, oddNames, oddStrings, oddUrlParts } from "./case.ts";

/** POST /jobs/batch, duplicate uniqueKeys, and GET /jobs/{id}, cancel and retry. */

const post = (json: unknown) => ({ method: "POST", path: "/jobs", json });
const batch = (json: unknown) => ({ method: "POST", path: "/jobs/batch", json });
const invalid: BadExpect = { status: 400, code: "validation_error" };
const notFound: BadExpect = { status: 404, code: "not_found" };
/** A lone surrogate in a path can't be decoded as UTF-8: a 400 or a 404, never a 500. */
const missingOrInvalid: BadExpect = { status: [400, 404] };

type Item = ErrorCode | "ok";
const batchCases: BadCase[] = [
  { name: "POST /jobs/batch jobs []", request: batch({ jobs: [] }), expect: invalid },
  {
    name: "POST /jobs/batch 101 jobs",
    request: batch({ jobs: Array.from({ length: 101 }, () => ({ kind: "echo" })) }),
    expect: invalid,
  },
  { name: "POST /jobs/batch jobs a string", request: batch({ jobs: "echo" }), expect: invalid },
  { name: "POST /jobs/batch jobs null", request: batch({ jobs: null }), expect: invalid },
  { name: "POST /jobs/batch {}", request: batch({}), expect: invalid },
  {
    name: "POST /jobs/batch an extra field",
    request: batch({ jobs: [{ kind: "echo" }], extra: 1 }),
    expect: invalid,
  },
  {
    name: "POST /jobs/batch body []",
    request: { method: "POST", path: "/jobs/batch", raw: "[]" },
    expect: invalid,
  },
  {
    name: "POST /jobs/batch odd payload strings, each item alone",
    request: batch({ jobs: oddNames.map((n) => ({ kind: "echo", payload: oddStrings[n] })) }),
    expect: { status: 200, items: oddNames.map((): Item => "ok") },
  },
  {
    name: "POST /jobs/batch odd uniqueKeys, each item alone",
    request: batch({
      jobs: oddNames.map((n) => ({ kind: "echo", payload: 1, uniqueKey: `batch ${oddStrings[n]}` })),
    }),
    expect: {
      status: 200,
      items: oddNames.map((n): Item => (n.startsWith("lone") || n === "huge" ? "validation_error" : "ok")),
    },
  },
  {
    name: "POST /jobs/batch bad items fail alone",
    request: {
      method: "POST",
      path: "/jobs/batch",
      raw: `{"jobs":[{"kind":"echo","payload":"🚀"},{"kind":"echo","payload":${nestedArrays(10_000)}},{"kind":"nope"},null,7,{"kind":"echo","queue":"heavy"},{"kind":"echo","payload":"${"x".repeat(1_050_000)}"}]}`,
    },
    expect: {
      status: 200,
      items: [
        "ok",
        "validation_error",
        "unknown_kind",
        "validation_error",
        "validation_error",
        "validation_error",
        "payload_too_large",
      ],
    },
  },
  {
    name: "POST /jobs/batch a live uniqueKey is a duplicate",
    request: (f) =>
      batch({
        jobs: [
          { kind: "echo", payload: 1, uniqueKey: f.liveUniqueKey },
          { kind: "echo", uniqueKey: f.liveEmojiKey },
        ],
      }),
    expect: { status: 200, items: ["ok", "ok"] },
  },
  {
    name: "POST /jobs/batch 30 emoji jobs (three SendMessageBatch calls)",
    request: batch({
      jobs: Array.from({ length: 30 }, (_, i) => ({ kind: "echo", payload: { i, s: "🚀\uFFFF\uD800" } })),
    }),
    expect: { status: 200, items: Array.from({ length: 30 }, (): Item => "ok") },
  },
];

const duplicateCases: BadCase[] = [
  {
    name: "POST /jobs a live uniqueKey answers 200 duplicate",
    request: (f) => post({ kind: "echo", uniqueKey: f.liveUniqueKey }),
    expect: { status: 200 },
  },
  {
    name: "POST /jobs a live emoji uniqueKey answers 200 duplicate",
    request: (f) => post({ kind: "echo", uniqueKey: f.liveEmojiKey }),
    expect: { status: 200 },
  },
];

/** GET /jobs/{id}, cancel and retry, with odd ids and ids of jobs in states that refuse. */
const idCases: BadCase[] = [
  ...oddNames
    .filter((n) => n !== "empty")
    .flatMap((n) =>
      ["", "/cancel", "/retry"].map((suffix) => ({
        name: `${suffix ? "POST" : "GET"} /jobs/{id}${suffix} id: ${n}`,
        request: { method: suffix ? "POST" : "GET", path: `/jobs/${oddUrlParts[n]}${suffix}` },
        expect: n.startsWith("lone") ? missingOrInvalid : notFound,
      })),
    ),
  {
    name: "GET /jobs/{id} an unknown ULID",
    request: { method: "GET", path: "/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV" },
    expect: notFound,
  },
  {
    name: "GET /jobs/{id} id with an encoded slash",
    request: { method: "GET", path: "/jobs/a%2Fb" },
    expect: notFound,
  },
  {
    name: "GET /jobs/{id} id with spaces and quotes",
    request: { method: "GET", path: "/jobs/%22%20or%201%3D1" },
    expect: notFound,
  },
  {
    name: "POST /jobs/{id}/cancel a done job",
    request: (f) => ({ method: "POST", path: `/jobs/${f.doneId}/cancel` }),
    expect: { status: 409, code: "conflict" },
  },
  {
    name: "POST /jobs/{id}/retry a done job",
    request: (f) => ({ method: "POST", path: `/jobs/${f.doneId}/retry` }),
    expect: { status: 409, code: "conflict" },
  },
  {
    name: "POST /jobs/{id}/retry a scheduled job",
    request: (f) => ({ method: "POST", path: `/jobs/${f.liveId}/retry` }),
    expect: { status: 409, code: "conflict" },
  },
  {
    name: "GET /jobs/{id} a done job",
    request: (f) => ({ method: "GET", path: `/jobs/${f.doneId}` }),
    expect: { status: 200 },
  },
];

export const batchAndIdCases: BadCase[] = [...batchCases, ...duplicateCases, ...idCases];
