import {
  type BadCase,
  type BadExpect,
  nestedArrays,
  nestedObjects,
  type OddString,
  oddNames,
  oddStrings,
  oddUrlParts,
} from "./case.ts";

/** GET /health, GET/PATCH /queues, pause/resume, GET/PUT/DELETE /schedules. */

const ok: BadExpect = { status: 200 };
const invalid: BadExpect = { status: 400, code: "validation_error" };
const notFound: BadExpect = { status: 404, code: "not_found" };
/** A lone surrogate in a path can't be decoded as UTF-8: a 400 or a 404, never a 500. */
const missingOrInvalid: BadExpect = { status: [400, 404] };

const healthCases: BadCase[] = [
  { name: "GET /health", request: { method: "GET", path: "/health" }, expect: ok },
  {
    name: "GET /health with a query",
    request: { method: "GET", path: "/health?x=%F0%9F%9A%80&y" },
    expect: ok,
  },
  { name: "GET /queues", request: { method: "GET", path: "/queues" }, expect: ok },
  { name: "GET /schedules", request: { method: "GET", path: "/schedules" }, expect: ok },
];

const patch = (name: string, json: unknown) => ({ method: "PATCH", path: `/queues/${name}`, json });
const patchRaw = (name: string, raw: string) => ({ method: "PATCH", path: `/queues/${name}`, raw });
const queueCases: BadCase[] = [
  ...oddNames.flatMap((n) =>
    ["pause", "resume"].map((action) => ({
      name: `POST /queues/{name}/${action} name: ${n}`,
      request: { method: "POST", path: `/queues/${oddUrlParts[n]}/${action}` },
      expect: n === "empty" || n.startsWith("lone") ? missingOrInvalid : notFound,
    })),
  ),
  ...oddNames
    .filter((n) => n !== "empty")
    .map((n) => ({
      name: `PATCH /queues/{name} name: ${n}`,
      request: patch(oddUrlParts[n], {}),
      expect: n.startsWith("lone") ? missingOrInvalid : notFound,
    })),
  { name: "POST /queues/heavy/pause", request: { method: "POST", path: "/queues/heavy/pause" }, expect: ok },
  {
    name: "POST /queues/heavy/resume",
    request: { method: "POST", path: "/queues/heavy/resume" },
    expect: ok,
  },
  {
    name: "PATCH /queues/heavy backoff",
    request: patch("heavy", { backoff: { maxSeconds: 600 } }),
    expect: ok,
  },
  {
    name: "PATCH /queues/heavy maxConcurrency on a pool queue",
    request: patch("heavy", { maxConcurrency: 50 }),
    expect: invalid,
  },
  ...([1, 1001, "50", 1e308, null, 2.5, [10]] as const).map((v) => ({
    name: `PATCH /queues/default maxConcurrency ${JSON.stringify(v)}`,
    request: patch("default", { maxConcurrency: v }),
    expect: invalid,
  })),
  {
    name: "PATCH /queues/default maxConcurrency 1e400",
    request: patchRaw("default", '{"maxConcurrency":1e400}'),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default base over max",
    request: patch("default", { backoff: { baseSeconds: 100, maxSeconds: 10 } }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default backoff 0",
    request: patch("default", { backoff: { baseSeconds: 0 } }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default backoff a string",
    request: patch("default", { backoff: "fast" }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default retention 0 days",
    request: patch("default", { retentionDays: { done: 0 } }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default retention 1e9 days",
    request: patch("default", { retentionDays: { dead: 1e9 } }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default an extra field",
    request: patch("default", { paused: true }),
    expect: invalid,
  },
  {
    name: "PATCH /queues/default backoff 10 000 levels",
    request: patchRaw("default", `{"backoff":${nestedObjects(10_000)}}`),
    expect: invalid,
  },
  { name: "PATCH /queues/default body null", request: patchRaw("default", "null"), expect: invalid },
  { name: "PATCH /queues/default body []", request: patchRaw("default", "[]"), expect: invalid },
  {
    name: "PATCH /queues/default without a body",
    request: { method: "PATCH", path: "/queues/default" },
    expect: invalid,
  },
];

const base = { cron: "0 0 * * *", kind: "echo", enabled: false };
const put = (name: string, json: unknown) => ({ method: "PUT", path: `/schedules/${name}`, json });
const putRaw = (name: string, raw: string) => ({ method: "PUT", path: `/schedules/${name}`, raw });
const unknownKind: BadExpect = { status: 400, code: "unknown_kind" };
const saved: BadExpect = { status: [200, 201] };

/** What each schedule field answers to each odd string. */
const fieldAnswers: Record<string, (n: OddString) => BadExpect> = {
  cron: () => invalid,
  timezone: () => invalid,
  kind: (n) => (n === "empty" ? invalid : unknownKind),
  queue: () => invalid,
  misfire: () => invalid,
  // Schedules allow 8 KB of payload (a huge one is over the body cap, above).
  payload: () => saved,
};

/** A 100 000-character field makes a body over PUT /schedules's 64 KiB cap: refused before it is parsed. */
const tooLarge: BadExpect = { status: 413, code: "payload_too_large" };

const scheduleCases: BadCase[] = [
  ...Object.entries(fieldAnswers).flatMap(([field, answer]) =>
    oddNames.map((n, i) => ({
      name: `PUT /schedules/{name} ${field}: ${n}`,
      request: put(`odd-${field}-${i}`, { ...base, [field]: oddStrings[n] }),
      expect: n === "huge" ? tooLarge : answer(n),
    })),
  ),
  ...oddNames
    .filter((n) => n !== "empty")
    .flatMap((n) => [
      {
        name: `PUT /schedules/{name} name: ${n}`,
        request: put(oddUrlParts[n], base),
        expect: n.startsWith("lone") ? missingOrInvalid : invalid,
      },
      {
        name: `DELETE /schedules/{name} name: ${n}`,
        request: { method: "DELETE", path: `/schedules/${oddUrlParts[n]}` },
        expect: n.startsWith("lone") ? missingOrInvalid : invalid,
      },
    ]),
  { name: "PUT /schedules/{name} name of 65 chars", request: put("n".repeat(65), base), expect: invalid },
  { name: "PUT /schedules/{name} {}", request: put("empty-body", {}), expect: invalid },
  { name: "PUT /schedules/{name} without cron", request: put("no-cron", { kind: "echo" }), expect: invalid },
  {
    name: "PUT /schedules/{name} without kind",
    request: put("no-kind", { cron: "* * * * *" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} an extra field",
    request: put("extra", { ...base, extra: 1 }),
    expect: invalid,
  },
  { name: "PUT /schedules/{name} body null", request: putRaw("null-body", "null"), expect: invalid },
  {
    name: "PUT /schedules/{name} without a body",
    request: { method: "PUT", path: "/schedules/no-body" },
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} cron of 7 fields",
    request: put("seven", { ...base, cron: "0 0 0 * * * *" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} minute 61",
    request: put("m61", { ...base, cron: "61 * * * *" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} 30 February never fires",
    request: put("feb30", { ...base, cron: "0 0 30 2 *" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} an unknown time zone",
    request: put("mars", { ...base, timezone: "Mars/Olympus" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} enabled a string",
    request: put("yes", { ...base, enabled: "yes" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} an undeclared queue",
    request: put("nope-queue", { ...base, queue: "nope" }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} payload over 8 KB",
    request: put("big", { ...base, payload: "x".repeat(9000) }),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} payload 10 000 levels",
    request: putRaw(
      "deep",
      `{"cron":"0 0 * * *","kind":"echo","enabled":false,"payload":${nestedArrays(10_000)}}`,
    ),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} payload 65 levels",
    request: putRaw(
      "deep65",
      `{"cron":"0 0 * * *","kind":"echo","enabled":false,"payload":${nestedArrays(65)}}`,
    ),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} payload 64 levels",
    request: putRaw(
      "deep64",
      `{"cron":"0 0 * * *","kind":"echo","enabled":false,"payload":${nestedArrays(64)}}`,
    ),
    expect: saved,
  },
  {
    name: "PUT /schedules/{name} payload 1e400",
    request: putRaw("inf", '{"cron":"0 0 * * *","kind":"echo","payload":1e400}'),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} cron 10 000 levels",
    request: putRaw("deep-cron", `{"cron":${nestedArrays(10_000, '"0 0 * * *"')},"kind":"echo"}`),
    expect: invalid,
  },
  {
    name: "PUT /schedules/{name} emoji payload",
    request: put("emoji", { ...base, payload: { s: "🚀\uFFFE\uD800" } }),
    expect: saved,
  },
  {
    name: "PUT /schedules/{name} the same again",
    request: put("emoji", { ...base, payload: { s: "🚀\uFFFE\uD800" } }),
    expect: ok,
  },
  {
    name: "DELETE /schedules/{name} a missing one",
    request: { method: "DELETE", path: "/schedules/missing" },
    expect: notFound,
  },
  {
    name: "DELETE /schedules/{name} one declared in code",
    request: { method: "DELETE", path: "/schedules/heartbeat-echo" },
    expect: { status: 409, code: "conflict" },
  },
  {
    name: "DELETE /schedules/{name} one made by the API",
    request: { method: "DELETE", path: "/schedules/emoji" },
    expect: { status: [200, 204] },
  },
];

export const opsCases: BadCase[] = [...healthCases, ...queueCases, ...scheduleCases];
