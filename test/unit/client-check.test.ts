import { expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { SkyforgeApiError } from "../../client/errors.ts";
import { enqueueCheck } from "../../client/validate.ts";
import { appRegistry } from "../../lib/engine.ts";
import { ClientError } from "../../lib/errors.ts";
import { validateEnqueue } from "../../lib/producer/validate.ts";

/**
 * The client given the app refuses exactly what the producer refuses, with the same status, code,
 * message and issues, and lets through what it accepts; only the payload's size inside its SQS
 * message is the producer's alone (the client can't know the engine's message format).
 */

const registry = appRegistry(app, app.poolKinds);
const check = enqueueCheck(app);

/** The producer's answer to a request: "ok", or its error as the API would answer it. */
function producerAnswer(raw: unknown) {
  try {
    validateEnqueue(raw, registry, app.queues);
    return "ok";
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    return { status: err.httpStatus, ...err.toBody().error };
  }
}
function clientAnswer(raw: unknown) {
  const refused = check(raw);
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
  ["a payload over 200 KB", { kind: "echo", payload: "x".repeat(210_000) }],
  ["a payload over 200 KB that also fails its schema", { kind: "flaky", payload: "x".repeat(210_000) }],
  ["a payload that fails its schema", { kind: "flaky", payload: { failTimes: "x" } }],
  ["an undeclared queue", { kind: "echo", payload: 1, queue: "defualt" }],
  ["a bad queue name", { kind: "echo", payload: 1, queue: "Default!" }],
  ["a Lambda kind on the pool queue", { kind: "echo", payload: 1, queue: "heavy" }],
  ["a pool kind on a Lambda queue", { kind: "py-digest", payload: {}, queue: "default" }],
];

test.each(requests)("%s: the client answers as the producer does", (_, raw) => {
  expect(clientAnswer(raw)).toEqual(producerAnswer(raw));
});

test("the rows cover every refusal code the app alone can give, and acceptance", () => {
  const answers = requests.map(([, raw]) => producerAnswer(raw));
  const codes = new Set(answers.map((a) => (a === "ok" ? "ok" : a.code)));
  expect(codes).toEqual(new Set(["ok", "validation_error", "unknown_kind", "payload_too_large"]));
});

test("a payload that only its SQS message makes too large: the producer refuses it, the client can't tell", () => {
  // A quote is 2 bytes of payload JSON (\") and 4 once that JSON is a string inside the message:
  // 70 000 of them are 140 KB of payload, under its 200 KB cap, and 280 KB of message, over 256 KB.
  const raw = { kind: "flaky", payload: '"'.repeat(70_000) };
  expect(producerAnswer(raw)).toMatchObject({ status: 413, code: "payload_too_large" });
  expect(producerAnswer(raw)).toMatchObject({ message: expect.stringMatching(/in the SQS message/) });
  // The producer checks the message before the payload schema (which this payload fails too).
  expect(clientAnswer(raw)).toMatchObject({ status: 400, code: "validation_error" });
});
