import { invalid, missingOrInvalid, notFound, ok, unknownKind } from "./answers.ts";
import {
  type BadCase,
  type BadExpect,
  badCase,
  nestedArrays,
  nestedObjects,
  type OddString,
  oddNames,
  oddStrings,
  oddUrlParts,
} from "./case.ts";

/** GET /health, GET/PATCH /queues, pause/resume, GET/PUT/DELETE /schedules. */

const healthCases: BadCase[] = [
  badCase("GET /health", { method: "GET", path: "/health" }, ok),
  badCase("GET /health with a query", { method: "GET", path: "/health?x=%F0%9F%9A%80&y" }, ok),
  badCase("GET /queues", { method: "GET", path: "/queues" }, ok),
  badCase("GET /schedules", { method: "GET", path: "/schedules" }, ok),
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
  badCase("POST /queues/heavy/pause", { method: "POST", path: "/queues/heavy/pause" }, ok),
  badCase("POST /queues/heavy/resume", { method: "POST", path: "/queues/heavy/resume" }, ok),
  badCase("PATCH /queues/heavy backoff", patch("heavy", { backoff: { maxSeconds: 600 } }), ok),
  badCase(
    "PATCH /queues/heavy maxConcurrency on a pool queue",
    patch("heavy", { maxConcurrency: 50 }),
    invalid,
  ),
  ...([1, 1001, "50", 1e308, null, 2.5, [10]] as const).map((v) => ({
    name: `PATCH /queues/default maxConcurrency ${JSON.stringify(v)}`,
    request: patch("default", { maxConcurrency: v }),
    expect: invalid,
  })),
  badCase(
    "PATCH /queues/default maxConcurrency 1e400",
    patchRaw("default", '{"maxConcurrency":1e400}'),
    invalid,
  ),
  badCase(
    "PATCH /queues/default base over max",
    patch("default", { backoff: { baseSeconds: 100, maxSeconds: 10 } }),
    invalid,
  ),
  badCase("PATCH /queues/default backoff 0", patch("default", { backoff: { baseSeconds: 0 } }), invalid),
  badCase("PATCH /queues/default backoff a string", patch("default", { backoff: "fast" }), invalid),
  badCase(
    "PATCH /queues/default retention 0 days",
    patch("default", { retentionDays: { done: 0 } }),
    invalid,
  ),
  badCase(
    "PATCH /queues/default retention 1e9 days",
    patch("default", { retentionDays: { dead: 1e9 } }),
    invalid,
  ),
  badCase("PATCH /queues/default an extra field", patch("default", { paused: true }), invalid),
  badCase(
    "PATCH /queues/default backoff 10 000 levels",
    patchRaw("default", `{"backoff":${nestedObjects(10_000)}}`),
    invalid,
  ),
  badCase("PATCH /queues/default body null", patchRaw("default", "null"), invalid),
  badCase("PATCH /queues/default body []", patchRaw("default", "[]"), invalid),
  badCase("PATCH /queues/default without a body", { method: "PATCH", path: "/queues/default" }, invalid),
];

const base = { cron: "0 0 * * *", kind: "echo", enabled: false };
const put = (name: string, json: unknown) => ({ method: "PUT", path: `/schedules/${name}`, json });
const putRaw = (name: string, raw: string) => ({ method: "PUT", path: `/schedules/${name}`, raw });
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
      badCase(
        `PUT /schedules/{name} name: ${n}`,
        put(oddUrlParts[n], base),
        n.startsWith("lone") ? missingOrInvalid : invalid,
      ),
      badCase(
        `DELETE /schedules/{name} name: ${n}`,
        { method: "DELETE", path: `/schedules/${oddUrlParts[n]}` },
        n.startsWith("lone") ? missingOrInvalid : invalid,
      ),
    ]),
  badCase("PUT /schedules/{name} name of 65 chars", put("n".repeat(65), base), invalid),
  badCase("PUT /schedules/{name} {}", put("empty-body", {}), invalid),
  badCase("PUT /schedules/{name} without cron", put("no-cron", { kind: "echo" }), invalid),
  badCase("PUT /schedules/{name} without kind", put("no-kind", { cron: "* * * * *" }), invalid),
  badCase("PUT /schedules/{name} an extra field", put("extra", { ...base, extra: 1 }), invalid),
  badCase("PUT /schedules/{name} body null", putRaw("null-body", "null"), invalid),
  badCase("PUT /schedules/{name} without a body", { method: "PUT", path: "/schedules/no-body" }, invalid),
  badCase(
    "PUT /schedules/{name} cron of 7 fields",
    put("seven", { ...base, cron: "0 0 0 * * * *" }),
    invalid,
  ),
  badCase("PUT /schedules/{name} minute 61", put("m61", { ...base, cron: "61 * * * *" }), invalid),
  badCase(
    "PUT /schedules/{name} 30 February never fires",
    put("feb30", { ...base, cron: "0 0 30 2 *" }),
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} an unknown time zone",
    put("mars", { ...base, timezone: "Mars/Olympus" }),
    invalid,
  ),
  badCase("PUT /schedules/{name} enabled a string", put("yes", { ...base, enabled: "yes" }), invalid),
  badCase(
    "PUT /schedules/{name} an undeclared queue",
    put("nope-queue", { ...base, queue: "nope" }),
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} payload over 8 KB",
    put("big", { ...base, payload: "x".repeat(9000) }),
    invalid,
  ),
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
  badCase(
    "PUT /schedules/{name} payload 1e400",
    putRaw("inf", '{"cron":"0 0 * * *","kind":"echo","payload":1e400}'),
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} cron 10 000 levels",
    putRaw("deep-cron", `{"cron":${nestedArrays(10_000, '"0 0 * * *"')},"kind":"echo"}`),
    invalid,
  ),
  badCase(
    "PUT /schedules/{name} emoji payload",
    put("emoji", { ...base, payload: { s: "🚀\uFFFE\uD800" } }),
    saved,
  ),
  badCase(
    "PUT /schedules/{name} the same again",
    put("emoji", { ...base, payload: { s: "🚀\uFFFE\uD800" } }),
    ok,
  ),
  badCase(
    "DELETE /schedules/{name} a missing one",
    { method: "DELETE", path: "/schedules/missing" },
    notFound,
  ),
  badCase(
    "DELETE /schedules/{name} one declared in code",
    { method: "DELETE", path: "/schedules/heartbeat-echo" },
    { status: 409, code: "conflict" },
  ),
  badCase(
    "DELETE /schedules/{name} one made by the API",
    { method: "DELETE", path: "/schedules/emoji" },
    { status: [200, 204] },
  ),
];

export const opsCases: BadCase[] = [...healthCases, ...queueCases, ...scheduleCases];
