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

const row = (name: string, payload: InvokeRow["payload"], expect: BadExpect): InvokeRow => ({
  name,
  payload,
  expect,
});

const rows: InvokeRow[] = [
  row("emoji payload", text({ kind: "echo", payload: { s: "🚀 ✨" } }), { payloadBack: { s: "🚀 ✨" } }),
  row("U+FFFE and U+FFFF payload", text({ kind: "echo", payload: "\uFFFE\uFFFF" }), {
    payloadBack: "\uFFFE\uFFFF",
  }),
  row("lone surrogates in the payload", text({ kind: "echo", payload: { "\uDC00": "\uD800" } }), {
    payloadBack: { "\uDC00": "\uD800" },
  }),
  row("emoji uniqueKey", text({ kind: "echo", payload: 1, uniqueKey: "invoke 🚀" }), ok),
  row("lone surrogate uniqueKey", text({ kind: "echo", uniqueKey: "k\uD800" }), invalid),
  row("payload 10 000 levels deep", `{"kind":"echo","payload":${nestedArrays(10_000)}}`, invalid),
  row("null", "null", invalid),
  row("a string", '"echo"', invalid),
  row("a number", "42", invalid),
  row("an array", "[]", invalid),
  row("{}", "{}", invalid),
  row("jobs []", text({ jobs: [] }), invalid),
  row("jobs a string", text({ jobs: "echo" }), invalid),
  row("101 jobs", text({ jobs: Array.from({ length: 101 }, () => ({ kind: "echo" })) }), invalid),
  row(
    "a batch whose bad items fail alone",
    `{"jobs":[{"kind":"echo","payload":"🚀"},{"kind":"echo","payload":${nestedArrays(10_000)}},{"kind":"echo","uniqueKey":"\\udc00"},{"kind":"nope"}]}`,
    { items: ["ok", "validation_error", "validation_error", "unknown_kind"] },
  ),
  row("an unknown kind", text({ kind: "nope" }), { code: "unknown_kind" }),
  row("a pool kind on a Lambda queue", text({ kind: "node-digest", queue: "default" }), invalid),
  row("a Lambda kind on the pool queue", text({ kind: "echo", queue: "heavy" }), invalid),
  row("a payload over 1 MiB", text({ kind: "echo", payload: "x".repeat(1_050_000) }), {
    code: "payload_too_large",
  }),
  row("a 300 KB payload (to the claims bucket)", text({ kind: "echo", payload: "y".repeat(300_000) }), {
    payloadBack: "y".repeat(300_000),
  }),
  row("a live uniqueKey", (f) => text({ kind: "echo", uniqueKey: f.liveUniqueKey }), ok),
  row("maxAttempts 1e400", '{"kind":"echo","maxAttempts":1e400}', invalid),
  row("priority 0", text({ kind: "echo", priority: 0 }), invalid),
  row("priority 6", text({ kind: "echo", priority: 6 }), invalid),
  row("priority 2.5", text({ kind: "echo", priority: 2.5 }), invalid),
  row('priority "urgent"', text({ kind: "echo", priority: "urgent" }), invalid),
  row("priority 4", text({ kind: "echo", payload: 1, priority: 4 }), ok),
  row("an extra field", text({ kind: "echo", extra: true }), invalid),
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
