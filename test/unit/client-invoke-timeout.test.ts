import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient } from "../../client/create-client.ts";
import { SkyforgeTransportError } from "../../client/errors.ts";
import { invokeTransport } from "../../client/invoke-transport.ts";
import type { AppNames } from "../../lib/declarations/define-app.ts";

/**
 * The Invoke transport gives up as the HTTP one does: an Invoke the Lambda endpoint never answers
 * (a function stuck until its own timeout, up to 15 minutes) is a transport error after timeoutMs,
 * with no answer, so enqueueMany reports its jobs as maybe queued.
 */

let server: Server;
let url: string;
let received = 0;
beforeAll(async () => {
  // Takes each Invoke and never answers it.
  server = createServer((req) => {
    received += 1;
    req.resume();
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

it("an Invoke left unanswered is a transport error after timeoutMs, without an answer", async () => {
  // Long enough that a loaded machine's request reaches the server before it runs out (the timeout
  // also covers the SDK's credentials and signing: at 150 ms, CI saw it lapse with nothing sent).
  const transport = invokeTransport({ functionName: "api", endpoint: url, timeoutMs: 2_000 });
  const started = performance.now();
  try {
    const err = await createClient<AppNames>({ transport })
      .queues.list()
      .then(
        () => expect.unreachable("expected a failure"),
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect((err as Error).message).toMatch(
      /^could not invoke api for GET \/queues: no answer within 2000 ms/,
    );
    expect((err as SkyforgeTransportError).answer).toBeUndefined();
    expect(received).toBe(1);
    // Bounded by the timeout, far under the SDK's own (none) or a test's 30 s.
    expect(performance.now() - started).toBeLessThan(10_000);

    const results = await createClient<AppNames>({ transport }).enqueueMany([{ kind: "echo", payload: 1 }]);
    expect(results[0]?.error).toMatchObject({ code: "internal", unanswered: true });
  } finally {
    transport.close();
  }
});
