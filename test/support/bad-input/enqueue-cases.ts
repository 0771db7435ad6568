import { created, invalid, unknownKind } from "./answers.ts";
import {
  type BadCase,
  type BadExpect,
  badCase,
  nestedArrays,
  nestedObjects,
  type OddString,
  oddNames,
  oddStrings,
  unusableBodies,
} from "./case.ts";

/** POST /jobs: every field, shapes, sizes, numbers and nesting. */

const post = (json: unknown) => ({ method: "POST", path: "/jobs", json });
const postRaw = (raw: string) => ({ method: "POST", path: "/jobs", raw });

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
  badCase(`POST /jobs payload string: ${n}`, post({ kind: "echo", payload: { text: oddStrings[n] } }), {
    ...created,
    payloadBack: { text: oddStrings[n] },
  }),
  badCase(`POST /jobs payload key: ${n}`, post({ kind: "echo", payload: { [oddStrings[n]]: 1 } }), {
    ...created,
    payloadBack: { [oddStrings[n]]: 1 },
  }),
]);

const shapeCases: BadCase[] = [
  ...unusableBodies("/jobs"),
  badCase("POST /jobs body a number", postRaw("42"), invalid),
  badCase("POST /jobs body truncated JSON", postRaw('{"kind":"echo"'), invalid),
  badCase("POST /jobs without kind", post({ payload: 1 }), invalid),
  badCase("POST /jobs kind a number", post({ kind: 7 }), invalid),
  badCase("POST /jobs kind an array", post({ kind: ["echo"] }), invalid),
  badCase("POST /jobs an extra field", post({ kind: "echo", extra: 1 }), invalid),
  badCase("POST /jobs __proto__ field", postRaw('{"kind":"echo","__proto__":{"x":1}}'), invalid),
  badCase("POST /jobs an undeclared queue", post({ kind: "echo", queue: "nope" }), invalid),
  badCase("POST /jobs a Lambda kind on the pool queue", post({ kind: "echo", queue: "heavy" }), invalid),
  badCase(
    "POST /jobs a pool kind on a Lambda queue",
    post({ kind: "py-digest", queue: "default", payload: { text: "x", rounds: 1 } }),
    invalid,
  ),
  badCase("POST /jobs payload over 1 MiB", post({ kind: "echo", payload: "x".repeat(1_050_000) }), {
    status: 413,
    code: "payload_too_large",
  }),
  badCase("POST /jobs 1.2 MB of 2-byte chars", post({ kind: "echo", payload: "é".repeat(600_000) }), {
    status: 413,
    code: "payload_too_large",
  }),
  badCase(
    "POST /jobs 300 KB of 2-byte chars (to the claims bucket)",
    post({ kind: "echo", payload: "é".repeat(150_000) }),
    created,
  ),
  badCase(
    "POST /jobs a payload its SQS message could not carry escaped (to the claims bucket)",
    post({ kind: "echo", payload: '"'.repeat(200_000) }),
    created,
  ),
  badCase("POST /jobs 300 000 emoji", post({ kind: "echo", payload: "🚀".repeat(300_000) }), {
    status: 413,
    code: "payload_too_large",
  }),
  badCase(
    "POST /jobs 40 000 emoji (to the claims bucket)",
    post({ kind: "echo", payload: "🚀".repeat(40_000) }),
    created,
  ),
  badCase("POST /jobs 10 000 emoji", post({ kind: "echo", payload: "🚀".repeat(10_000) }), created),
];

const numberCases: BadCase[] = [
  ...([-1, 1.5, 1e308, "5", null, true, []] as const).map((v) => ({
    name: `POST /jobs delaySeconds ${JSON.stringify(v)}`,
    request: post({ kind: "echo", delaySeconds: v }),
    expect: invalid,
  })),
  badCase("POST /jobs delaySeconds 1e400", postRaw('{"kind":"echo","delaySeconds":1e400}'), invalid),
  badCase("POST /jobs delaySeconds NaN", postRaw('{"kind":"echo","delaySeconds":NaN}'), invalid),
  badCase("POST /jobs delaySeconds one year", post({ kind: "echo", delaySeconds: 365 * 24 * 3600 }), created),
  ...([0, 101, 2.5, "3"] as const).map((v) => ({
    name: `POST /jobs maxAttempts ${JSON.stringify(v)}`,
    request: post({ kind: "echo", maxAttempts: v }),
    expect: invalid,
  })),
  badCase("POST /jobs maxAttempts 1e400", postRaw('{"kind":"echo","maxAttempts":1e400}'), invalid),
  badCase("POST /jobs maxAttempts -0 as text", postRaw('{"kind":"echo","maxAttempts":-0}'), invalid),
  ...([0, 6, -1, 2.5, "3", "high", null, true, [5]] as const).map((v) => ({
    name: `POST /jobs priority ${JSON.stringify(v)}`,
    request: post({ kind: "echo", priority: v }),
    expect: invalid,
  })),
  badCase("POST /jobs priority 1e400", postRaw('{"kind":"echo","priority":1e400}'), invalid),
  ...([1, 5, "normal", "critical"] as const).map((v) => ({
    name: `POST /jobs priority ${JSON.stringify(v)}`,
    request: post({ kind: "echo", priority: v }),
    expect: created,
  })),
  ...([0, 43_201, -5] as const).map((v) => ({
    name: `POST /jobs timeoutSeconds ${v}`,
    request: post({ kind: "echo", timeoutSeconds: v }),
    expect: invalid,
  })),
  badCase("POST /jobs payload 1e400 (Infinity)", postRaw('{"kind":"echo","payload":1e400}'), invalid),
  badCase("POST /jobs payload 1e308", post({ kind: "echo", payload: 1e308 }), {
    ...created,
    payloadBack: 1e308,
  }),
  badCase(
    "POST /jobs payload a 20-digit integer",
    postRaw('{"kind":"echo","payload":12345678901234567890}'),
    created,
  ),
  badCase("POST /jobs runAt 30 February", post({ kind: "echo", runAt: "2025-02-30T00:00:00Z" }), invalid),
  badCase("POST /jobs runAt year 0000", post({ kind: "echo", runAt: "0000-01-01T00:00:00Z" }), created),
  badCase("POST /jobs runAt year 9999", post({ kind: "echo", runAt: "9999-12-31T23:59:59Z" }), created),
  badCase(
    "POST /jobs runAt and delaySeconds",
    post({ kind: "echo", runAt: "2030-01-01T00:00:00Z", delaySeconds: 1 }),
    invalid,
  ),
];

const tags = (value: unknown) => post({ kind: "echo", payload: 1, tags: value });
const tagCases: BadCase[] = [
  badCase("POST /jobs 11 tags", tags(Array.from({ length: 11 }, (_, i) => `t${i}`)), invalid),
  badCase(
    "POST /jobs 10 tags of 64 characters",
    tags(Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(64, "x"))),
    created,
  ),
  badCase("POST /jobs a tag of 65 characters", tags(["x".repeat(65)]), invalid),
  badCase("POST /jobs a tag of 64 emoji (128 UTF-16 units)", tags(["🚀".repeat(64)]), created),
  badCase("POST /jobs a tag of 65 emoji", tags(["🚀".repeat(65)]), invalid),
  badCase("POST /jobs an empty tag", tags([""]), invalid),
  badCase("POST /jobs a tag with a lone high surrogate", tags(["a\uD800"]), invalid),
  badCase("POST /jobs a tag with a lone low surrogate", tags(["\uDC00b"]), invalid),
  badCase("POST /jobs tags a string", tags("order-42"), invalid),
  badCase("POST /jobs a tag a number", tags([42]), invalid),
  badCase("POST /jobs tags null", tags(null), invalid),
  badCase("POST /jobs no tags", tags([]), created),
];

const deepCases: BadCase[] = [
  badCase(
    "POST /jobs payload 10 000 nested arrays",
    postRaw(`{"kind":"echo","payload":${nestedArrays(10_000)}}`),
    invalid,
  ),
  badCase(
    "POST /jobs payload 10 000 nested objects",
    postRaw(`{"kind":"echo","payload":${nestedObjects(10_000)}}`),
    invalid,
  ),
  badCase(
    "POST /jobs payload 100 000 nested arrays",
    postRaw(`{"kind":"echo","payload":${nestedArrays(100_000)}}`),
    invalid,
  ),
  badCase("POST /jobs payload 65 levels", postRaw(`{"kind":"echo","payload":${nestedArrays(65)}}`), invalid),
  badCase("POST /jobs payload 64 levels", postRaw(`{"kind":"echo","payload":${nestedArrays(64)}}`), created),
  badCase("POST /jobs kind 10 000 levels", postRaw(`{"kind":${nestedArrays(10_000, '"echo"')}}`), invalid),
  badCase(
    "POST /jobs extra field 10 000 levels",
    postRaw(`{"kind":"echo","x":${nestedObjects(10_000)}}`),
    invalid,
  ),
  badCase("POST /jobs body 10 000 nested arrays", postRaw(nestedArrays(10_000)), invalid),
  badCase(
    "POST /jobs/batch jobs 10 000 levels",
    { method: "POST", path: "/jobs/batch", raw: `{"jobs":${nestedArrays(10_000)}}` },
    { status: 200, items: ["validation_error"] },
  ),
];

export const enqueueCases: BadCase[] = [
  ...oddFieldCases,
  ...oddPayloadCases,
  ...shapeCases,
  ...numberCases,
  ...tagCases,
  ...deepCases,
];
