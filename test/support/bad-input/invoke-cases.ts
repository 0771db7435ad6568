import type { BadCase, BadExpect, BadRequest, Fixtures } from "./case.ts";
import { nestedArrays } from "./case.ts";

/**
 * The Lambda Invoke API (`enqueue`), each row sent both through @aws-sdk/client-lambda and a raw
 * fetch. A caller's mistake comes back as a 200 with `{ error }`, never as a function error.
 * InvocationType, Qualifier, names and framing are covered by the raw-HTTP suite.
 */
interface InvokeRow {
  name: string;
  payload: string | ((f: Fixtures) => string);
  expect: BadExpect;
}

const text = JSON.stringify;
const ok: BadExpect = {};
const invalid: BadExpect = { code: "validation_error" };

const rows: InvokeRow[] = [
  {
    name: "emoji payload",
    payload: text({ kind: "echo", payload: { s: "🚀 ✨" } }),
    expect: { payloadBack: { s: "🚀 ✨" } },
  },
  {
    name: "U+FFFE and U+FFFF payload",
    payload: text({ kind: "echo", payload: "\uFFFE\uFFFF" }),
    expect: { payloadBack: "\uFFFE\uFFFF" },
  },
  {
    name: "lone surrogates in the payload",
    payload: text({ kind: "echo", payload: { "\uDC00": "\uD800" } }),
    expect: { payloadBack: { "\uDC00": "\uD800" } },
  },
  {
    name: "emoji uniqueKey",
    payload: text({ kind: "echo", payload: 1, uniqueKey: "invoke 🚀" }),
    expect: ok,
  },
  {
    name: "lone surrogate uniqueKey",
    payload: text({ kind: "echo", uniqueKey: "k\uD800" }),
    expect: invalid,
  },
  {
    name: "payload 10 000 levels deep",
    payload: `{"kind":"echo","payload":${nestedArrays(10_000)}}`,
    expect: invalid,
  },
  { name: "null", payload: "null", expect: invalid },
  { name: "a string", payload: '"echo"', expect: invalid },
  { name: "a number", payload: "42", expect: invalid },
  { name: "an array", payload: "[]", expect: invalid },
  { name: "{}", payload: "{}", expect: invalid },
  { name: "jobs []", payload: text({ jobs: [] }), expect: invalid },
  { name: "jobs a string", payload: text({ jobs: "echo" }), expect: invalid },
  {
    name: "101 jobs",
    payload: text({ jobs: Array.from({ length: 101 }, () => ({ kind: "echo" })) }),
    expect: invalid,
  },
  {
    name: "a batch whose bad items fail alone",
    payload: `{"jobs":[{"kind":"echo","payload":"🚀"},{"kind":"echo","payload":${nestedArrays(10_000)}},{"kind":"echo","uniqueKey":"\\udc00"},{"kind":"nope"}]}`,
    expect: { items: ["ok", "validation_error", "validation_error", "unknown_kind"] },
  },
  { name: "an unknown kind", payload: text({ kind: "nope" }), expect: { code: "unknown_kind" } },
  {
    name: "a pool kind on a Lambda queue",
    payload: text({ kind: "node-digest", queue: "default" }),
    expect: invalid,
  },
  {
    name: "a Lambda kind on the pool queue",
    payload: text({ kind: "echo", queue: "heavy" }),
    expect: invalid,
  },
  {
    name: "a payload over 1 MiB",
    payload: text({ kind: "echo", payload: "x".repeat(1_050_000) }),
    expect: { code: "payload_too_large" },
  },
  {
    name: "a 300 KB payload (to the claims bucket)",
    payload: text({ kind: "echo", payload: "y".repeat(300_000) }),
    expect: { payloadBack: "y".repeat(300_000) },
  },
  {
    name: "a live uniqueKey",
    payload: (f) => text({ kind: "echo", uniqueKey: f.liveUniqueKey }),
    expect: ok,
  },
  { name: "maxAttempts 1e400", payload: '{"kind":"echo","maxAttempts":1e400}', expect: invalid },
  { name: "an extra field", payload: text({ kind: "echo", extra: true }), expect: invalid },
];

export const invokeCases: BadCase[] = rows.flatMap((row) =>
  (["sdk", "fetch"] as const).map((via) => ({
    name: `Invoke (${via}) ${row.name}`,
    request: (f: Fixtures): BadRequest => ({
      invoke: via,
      payload: typeof row.payload === "function" ? row.payload(f) : row.payload,
    }),
    expect: row.expect,
  })),
);
