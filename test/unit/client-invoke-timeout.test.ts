import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { createClient } from "../../client/create-client.ts";
import { SkyforgeTransportError } from "../../client/errors.ts";
import { invokeTransport } from "../../client/invoke-transport.ts";
import type { AppNames } from "../../lib/declarations/app-names.ts";
import { deferred, withinMs } from "../support/wait.ts";

/**
 * The Invoke transport gives up as the HTTP one does: an Invoke the Lambda endpoint never answers
 * (a function stuck until its own timeout, up to 15 minutes) is a transport error after timeoutMs,
 * with no answer, so enqueueMany reports its jobs as maybe queued.
 *
 * The test judges by evidence, not by the real clock: the transport's timer (AbortSignal.timeout,
 * the clock it reads) is handed out by the test, which lets it run out only once the server says the
 * Invoke has arrived. On a loaded machine a real 150 ms could lapse before the request was sent.
 */

let server: Server;
let url: string;
/** Resolved as the server takes each Invoke (and never answers it), in order. */
const arrivals: ReturnType<typeof deferred<void>>[] = [];
let received = 0;
beforeAll(async () => {
  server = createServer((req) => {
    req.resume();
    arrivals[received]?.resolve();
    received += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
afterEach(() => {
  vi.restoreAllMocks();
});

/** The timers the code under test asks for: each one runs out when the test says so. */
function manualTimeouts() {
  const asked: { ms: number; runOut(): void }[] = [];
  vi.spyOn(AbortSignal, "timeout").mockImplementation((ms: number) => {
    const controller = new AbortController();
    asked.push({
      ms,
      // What a real AbortSignal.timeout aborts with.
      runOut: () =>
        controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    });
    return controller.signal;
  });
  return asked;
}

/**
 * Once the server has the `nth` Invoke (from 1): the timer the transport armed for it runs out. One
 * timer per Invoke, of the configured length, armed before the request went out.
 */
async function timeOutOnceArrived(asked: ReturnType<typeof manualTimeouts>, nth: number, timeoutMs: number) {
  const arrived = deferred();
  arrivals[nth - 1] = arrived;
  if (received >= nth) arrived.resolve();
  await withinMs(arrived.promise, `Invoke ${nth} at the server`, 20_000);
  expect(asked.map((t) => t.ms)).toEqual(Array.from({ length: nth }, () => timeoutMs));
  asked.at(-1)?.runOut();
}

it("an Invoke left unanswered is a transport error after timeoutMs, without an answer", async () => {
  const asked = manualTimeouts();
  const transport = invokeTransport({ functionName: "api", endpoint: url, timeoutMs: 150 });
  try {
    const failure = createClient<AppNames>({ transport })
      .queues.list()
      .then(
        () => expect.unreachable("expected a failure"),
        (e: unknown) => e,
      );
    const [, err] = await Promise.all([
      timeOutOnceArrived(asked, 1, 150),
      // Bounded so a transport that ignores its signal fails here rather than at the test's timeout.
      withinMs(failure, "failure after the timer ran out", 10_000),
    ]);
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect((err as Error).message).toMatch(/^could not invoke api for GET \/queues: no answer within 150 ms/);
    expect((err as SkyforgeTransportError).answer).toBeUndefined();
    expect(received).toBe(1);

    const many = createClient<AppNames>({ transport }).enqueueMany([{ kind: "echo", payload: 1 }]);
    const [, results] = await Promise.all([
      timeOutOnceArrived(asked, 2, 150),
      withinMs(many, "enqueueMany's results after the timer ran out", 10_000),
    ]);
    expect(results[0]?.error).toMatchObject({ code: "internal", unanswered: true });
  } finally {
    transport.close();
  }
});
