import type { ErrorCode } from "../../../lib/errors.ts";
import { conflict, invalid, missingOrInvalid, notFound } from "./answers.ts";
import { type BadCase, badCase, nestedArrays, oddNames, oddStrings, oddUrlParts } from "./case.ts";

/** POST /jobs/batch, duplicate uniqueKeys, and GET /jobs/{id}, cancel and retry. */

const post = (json: unknown) => ({ method: "POST", path: "/jobs", json });
const batch = (json: unknown) => ({ method: "POST", path: "/jobs/batch", json });

type Item = ErrorCode | "ok";
const batchCases: BadCase[] = [
  badCase("POST /jobs/batch jobs []", batch({ jobs: [] }), invalid),
  badCase(
    "POST /jobs/batch 101 jobs",
    batch({ jobs: Array.from({ length: 101 }, () => ({ kind: "echo" })) }),
    invalid,
  ),
  badCase("POST /jobs/batch jobs a string", batch({ jobs: "echo" }), invalid),
  badCase("POST /jobs/batch jobs null", batch({ jobs: null }), invalid),
  badCase("POST /jobs/batch {}", batch({}), invalid),
  badCase("POST /jobs/batch an extra field", batch({ jobs: [{ kind: "echo" }], extra: 1 }), invalid),
  badCase("POST /jobs/batch body []", { method: "POST", path: "/jobs/batch", raw: "[]" }, invalid),
  badCase(
    "POST /jobs/batch odd payload strings, each item alone",
    batch({ jobs: oddNames.map((n) => ({ kind: "echo", payload: oddStrings[n] })) }),
    { status: 200, items: oddNames.map((): Item => "ok") },
  ),
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
  badCase(
    "POST /jobs a live uniqueKey answers 200 duplicate",
    (f) => post({ kind: "echo", uniqueKey: f.liveUniqueKey }),
    { status: 200 },
  ),
  badCase(
    "POST /jobs a live emoji uniqueKey answers 200 duplicate",
    (f) => post({ kind: "echo", uniqueKey: f.liveEmojiKey }),
    { status: 200 },
  ),
];

/** GET /jobs/{id}, cancel and retry, with odd ids and ids of jobs in states that refuse. */
const idCases: BadCase[] = [
  ...oddNames
    .filter((n) => n !== "empty")
    .flatMap((n) =>
      ["", "/cancel", "/retry", "/resume"].map((suffix) => ({
        name: `${suffix ? "POST" : "GET"} /jobs/{id}${suffix} id: ${n}`,
        request: { method: suffix ? "POST" : "GET", path: `/jobs/${oddUrlParts[n]}${suffix}` },
        expect: n.startsWith("lone") ? missingOrInvalid : notFound,
      })),
    ),
  badCase(
    "GET /jobs/{id} an unknown ULID",
    { method: "GET", path: "/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV" },
    notFound,
  ),
  badCase("GET /jobs/{id} id with an encoded slash", { method: "GET", path: "/jobs/a%2Fb" }, notFound),
  badCase(
    "GET /jobs/{id} id with spaces and quotes",
    { method: "GET", path: "/jobs/%22%20or%201%3D1" },
    notFound,
  ),
  badCase(
    "POST /jobs/{id}/cancel a done job",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/cancel` }),
    { status: 409, code: "conflict" },
  ),
  badCase("POST /jobs/{id}/retry a done job", (f) => ({ method: "POST", path: `/jobs/${f.doneId}/retry` }), {
    status: 409,
    code: "conflict",
  }),
  badCase(
    "POST /jobs/{id}/retry a scheduled job",
    (f) => ({ method: "POST", path: `/jobs/${f.liveId}/retry` }),
    { status: 409, code: "conflict" },
  ),
  // A resume takes only a paused job, and an optional { payload } (docs/architecture.md §21).
  badCase(
    "POST /jobs/{id}/resume a done job",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/resume` }),
    conflict,
  ),
  badCase(
    "POST /jobs/{id}/resume a scheduled job, with a payload",
    (f) => ({ method: "POST", path: `/jobs/${f.liveId}/resume`, json: { payload: { n: 1 } } }),
    conflict,
  ),
  badCase(
    "POST /jobs/{id}/resume an unknown field",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/resume`, json: { payload: 1, maxAttempts: 3 } }),
    invalid,
  ),
  badCase(
    "POST /jobs/{id}/resume body []",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/resume`, raw: "[]" }),
    invalid,
  ),
  badCase(
    "POST /jobs/{id}/resume body a string",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/resume`, raw: '"go"' }),
    invalid,
  ),
  badCase(
    "POST /jobs/{id}/resume body not JSON",
    (f) => ({ method: "POST", path: `/jobs/${f.doneId}/resume`, raw: "{payload" }),
    invalid,
  ),
  badCase("GET /jobs/{id} a done job", (f) => ({ method: "GET", path: `/jobs/${f.doneId}` }), {
    status: 200,
  }),
];

export const batchAndIdCases: BadCase[] = [...batchCases, ...duplicateCases, ...idCases];
