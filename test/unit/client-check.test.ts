import { expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { SkyforgeApiError } from "../../client/errors.ts";
import { enqueueCheck } from "../../client/validate.ts";
import { appRegistry } from "../../lib/engine.ts";
import { ClientError } from "../../lib/errors.ts";
import { kindsReadyFor, validateEnqueue } from "../../lib/producer/validate.ts";

/**
 * The client given the app refuses exactly what the producer refuses, with the same status, code,
 * message and issues, and lets through what it accepts. No check is the producer's alone: a payload
 * its SQS message could not carry goes to the claims bucket, so its size is all that counts.
 */

const registry = appRegistry(app, app.poolKinds);
const check = enqueueCheck(app);

/** The producer's answer to a request: "ok", or its error as the API would answer it. */
async function producerAnswer(raw: unknown) {
  try {
    await kindsReadyFor(registry, [raw]);
    validateEnqueue(raw, registry, app.queues);
    return "ok";
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    return { status: err.httpStatus, ...err.toBody().error };
  }
}
async function clientAnswer(raw: unknown) {
  const refused = await check(raw);
  if (!refused) return "ok";
  expect(refused).toBeInstanceOf(SkyforgeApiError);
  expect(refused.raisedBy).toBe("client");
  return { status: refused.status, ...refused.toBody() };
}

const requests: [string, unknown][] = [
  ["a valid echo", { kind: "echo", payload: { any: 1 } }],
  ["a valid flaky on its queue", { kind: "flaky", payload: { failTimes: 1 }, queue: "default" }],
  ["a valid pool kind", { kind: "py-digest", payload: { text: "x", rounds: 1 } }],
  ["not an object", "echo"],
  ["an extra field", { kind: "echo", payload: 1, extra: true }],
  ["delaySeconds and runAt", { kind: "echo", delaySeconds: 5, runAt: "2030-01-01T00:00:00Z" }],
  ["an unknown kind", { kind: "flakey", payload: {} }],
  ["a payload over 1 MiB", { kind: "echo", payload: "x".repeat(1_050_000) }],
  ["a payload over 1 MiB that also fails its schema", { kind: "flaky", payload: "x".repeat(1_050_000) }],
  // 140 KB of payload, 280 KB once a JSON string inside a message: it goes to the claims bucket instead.
  ["a payload its SQS message could not carry", { kind: "echo", payload: '"'.repeat(70_000) }],
  ["a payload that fails its schema", { kind: "flaky", payload: { failTimes: "x" } }],
  ["an undeclared queue", { kind: "echo", payload: 1, queue: "defualt" }],
  ["a bad queue name", { kind: "echo", payload: 1, queue: "Default!" }],
  ["a Lambda kind on the pool queue", { kind: "echo", payload: 1, queue: "heavy" }],
  ["a pool kind on a Lambda queue", { kind: "py-digest", payload: {}, queue: "default" }],
];

test.each(requests)("%s: the client answers as the producer does", async (_, raw) => {
  expect(await clientAnswer(raw)).toEqual(await producerAnswer(raw));
});

test("the rows cover every refusal code the app alone can give, and acceptance", async () => {
  const answers = await Promise.all(requests.map(([, raw]) => producerAnswer(raw)));
  const codes = new Set(answers.map((a) => (a === "ok" ? "ok" : a.code)));
  expect(codes).toEqual(new Set(["ok", "validation_error", "unknown_kind", "payload_too_large"]));
});
