import {
  type BadCase,
  type BadExpect,
  nestedArrays,
  nestedObjects,
  type OddString,
  oddNames,
  oddStrings,
} from "./case.ts";

/** POST /jobs: every field, shapes, sizes, numbers and nesting. */

const post = (json: unknown) => ({ method: "POST", path: "/jobs", json });
const postRaw = (raw: string) => ({ method: "POST", path: "/jobs", raw });
const created: BadExpect = { status: 201 };
const invalid: BadExpect = { status: 400, code: "validation_error" };
const unknownKind: BadExpect = { status: 400, code: "unknown_kind" };

/** What each enqueue field answers to each odd string. */
const fieldAnswers: Record<string, (name: OddString) => BadExpect> = {
  kind: (n) => (n === "empty" || n === "huge" ? invalid : unknownKind),
  queue: () => invalid,
  runAt: () => invalid,
  priority: () => invalid,
  // DynamoDB stores strings as UTF-8, which has no lone surrogates: refused, naming uniqueKey.
  uniqueKey: (n) => (n.startsWith("lone") || n === "empty" || n === "huge" ? invalid : created),
};

const oddFieldCases: BadCase[] = Object.entries(fieldAnswers).flatMap(([field, answer]) =>
  oddNames.map((n) => ({
    name: `POST /jobs ${field}: ${n}`,
    request: post({ kind: "echo", payload: 1, [field]: oddStrings[n] }),
    expect: answer(n),
  })),
);

const oddPayloadCases: BadCase[] = oddNames.flatMap((n) => [
  {
    name: `POST /jobs payload string: ${n}`,
    request: post({ kind: "echo", payload: { text: oddStrings[n] } }),
    expect: { ...created, payloadBack: { text: oddStrings[n] } },
  },
  {
    name: `POST /jobs payload key: ${n}`,
    request: post({ kind: "echo", payload: { [oddStrings[n]]: 1 } }),
    expect: { ...created, payloadBack: { [oddStrings[n]]: 1 } },
  },
]);

const shapeCases: BadCase[] = [
  { name: "POST /jobs without a body", request: { method: "POST", path: "/jobs" }, expect: invalid },
  { name: "POST /jobs body null", request: postRaw("null"), expect: invalid },
  { name: "POST /jobs body []", request: postRaw("[]"), expect: invalid },
  { name: "POST /jobs body a string", request: postRaw('"echo"'), expect: invalid },
  { name: "POST /jobs body a number", request: postRaw("42"), expect: invalid },
  { name: "POST /jobs body {}", request: post({}), expect: invalid },
  { name: "POST /jobs body truncated JSON", request: postRaw('{"kind":"echo"'), expect: invalid },
  { name: "POST /jobs without kind", request: post({ payload: 1 }), expect: invalid },
  { name: "POST /jobs kind a number", request: post({ kind: 7 }), expect: invalid },
  { name: "POST /jobs kind an array", request: post({ kind: ["echo"] }), expect: invalid },
  { name: "POST /jobs an extra field", request: post({ kind: "echo", extra: 1 }), expect: invalid },
  {
    name: "POST /jobs __proto__ field",
    request: postRaw('{"kind":"echo","__proto__":{"x":1}}'),
    expect: invalid,
  },
  { name: "POST /jobs an undeclared queue", request: post({ kind: "echo", queue: "nope" }), expect: invalid },
  {
    name: "POST /jobs a Lambda kind on the pool queue",
    request: post({ kind: "echo", queue: "heavy" }),
    expect: invalid,
  },
  {
    name: "POST /jobs a pool kind on a Lambda queue",
    request: post({ kind: "py-digest", queue: "default", payload: { text: "x", rounds: 1 } }),
    expect: invalid,
  },
  {
    name: "POST /jobs payload over 1 MiB",
    request: post({ kind: "echo", payload: "x".repeat(1_050_000) }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "POST /jobs 1.2 MB of 2-byte chars",
    request: post({ kind: "echo", payload: "é".repeat(600_000) }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "POST /jobs 300 KB of 2-byte chars (to the claims bucket)",
    request: post({ kind: "echo", payload: "é".repeat(150_000) }),
    expect: created,
  },
  {
    name: "POST /jobs a payload its SQS message could not carry escaped (to the claims bucket)",
    request: post({ kind: "echo", payload: '"'.repeat(200_000) }),
    expect: created,
  },
  {
    name: "POST /jobs 300 000 emoji",
    request: post({ kind: "echo", payload: "🚀".repeat(300_000) }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "POST /jobs 40 000 emoji (to the claims bucket)",
    request: post({ kind: "echo", payload: "🚀".repeat(40_000) }),
    expect: created,
  },
  {
    name: "POST /jobs 10 000 emoji",
    request: post({ kind: "echo", payload: "🚀".repeat(10_000) }),
    expect: created,
  },
];

const numberCases: BadCase[] = [
  ...([-1, 1.5, 1e308, "5", null, true, []] as const).map((v) => ({
    name: `POST /jobs delaySeconds ${JSON.stringify(v)}`,
    request: post({ kind: "echo", delaySeconds: v }),
    expect: invalid,
  })),
  {
    name: "POST /jobs delaySeconds 1e400",
    request: postRaw('{"kind":"echo","delaySeconds":1e400}'),
    expect: invalid,
  },
  {
    name: "POST /jobs delaySeconds NaN",
    request: postRaw('{"kind":"echo","delaySeconds":NaN}'),
    expect: invalid,
  },
  {
    name: "POST /jobs delaySeconds one year",
    request: post({ kind: "echo", delaySeconds: 365 * 24 * 3600 }),
    expect: created,
  },
  ...([0, 101, 2.5, "3"] as const).map((v) => ({
    name: `POST /jobs maxAttempts ${JSON.stringify(v)}`,
    request: post({ kind: "echo", maxAttempts: v }),
    expect: invalid,
  })),
  {
    name: "POST /jobs maxAttempts 1e400",
    request: postRaw('{"kind":"echo","maxAttempts":1e400}'),
    expect: invalid,
  },
  {
    name: "POST /jobs maxAttempts -0 as text",
    request: postRaw('{"kind":"echo","maxAttempts":-0}'),
    expect: invalid,
  },
  ...([0, 43_201, -5] as const).map((v) => ({
    name: `POST /jobs timeoutSeconds ${v}`,
    request: post({ kind: "echo", timeoutSeconds: v }),
    expect: invalid,
  })),
  {
    name: "POST /jobs payload 1e400 (Infinity)",
    request: postRaw('{"kind":"echo","payload":1e400}'),
    expect: invalid,
  },
  {
    name: "POST /jobs payload 1e308",
    request: post({ kind: "echo", payload: 1e308 }),
    expect: { ...created, payloadBack: 1e308 },
  },
  {
    name: "POST /jobs payload a 20-digit integer",
    request: postRaw('{"kind":"echo","payload":12345678901234567890}'),
    expect: created,
  },
  {
    name: "POST /jobs runAt 30 February",
    request: post({ kind: "echo", runAt: "2025-02-30T00:00:00Z" }),
    expect: invalid,
  },
  {
    name: "POST /jobs runAt year 0000",
    request: post({ kind: "echo", runAt: "0000-01-01T00:00:00Z" }),
    expect: created,
  },
  {
    name: "POST /jobs runAt year 9999",
    request: post({ kind: "echo", runAt: "9999-12-31T23:59:59Z" }),
    expect: created,
  },
  {
    name: "POST /jobs runAt and delaySeconds",
    request: post({ kind: "echo", runAt: "2030-01-01T00:00:00Z", delaySeconds: 1 }),
    expect: invalid,
  },
];

const deepCases: BadCase[] = [
  {
    name: "POST /jobs payload 10 000 nested arrays",
    request: postRaw(`{"kind":"echo","payload":${nestedArrays(10_000)}}`),
    expect: invalid,
  },
  {
    name: "POST /jobs payload 10 000 nested objects",
    request: postRaw(`{"kind":"echo","payload":${nestedObjects(10_000)}}`),
    expect: invalid,
  },
  {
    name: "POST /jobs payload 100 000 nested arrays",
    request: postRaw(`{"kind":"echo","payload":${nestedArrays(100_000)}}`),
    expect: invalid,
  },
  {
    name: "POST /jobs payload 65 levels",
    request: postRaw(`{"kind":"echo","payload":${nestedArrays(65)}}`),
    expect: invalid,
  },
  {
    name: "POST /jobs payload 64 levels",
    request: postRaw(`{"kind":"echo","payload":${nestedArrays(64)}}`),
    expect: created,
  },
  {
    name: "POST /jobs kind 10 000 levels",
    request: postRaw(`{"kind":${nestedArrays(10_000, '"echo"')}}`),
    expect: invalid,
  },
  {
    name: "POST /jobs extra field 10 000 levels",
    request: postRaw(`{"kind":"echo","x":${nestedObjects(10_000)}}`),
    expect: invalid,
  },
  { name: "POST /jobs body 10 000 nested arrays", request: postRaw(nestedArrays(10_000)), expect: invalid },
  {
    name: "POST /jobs/batch jobs 10 000 levels",
    request: { method: "POST", path: "/jobs/batch", raw: `{"jobs":${nestedArrays(10_000)}}` },
    expect: { status: 200, items: ["validation_error"] },
  },
];

export const enqueueCases: BadCase[] = [
  ...oddFieldCases,
  ...oddPayloadCases,
  ...shapeCases,
  ...numberCases,
  ...deepCases,
];
