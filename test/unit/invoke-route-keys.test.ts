import { expect, it } from "vitest";
import { SkyforgeTransportError } from "../../client/errors.ts";
import { invokeTransport } from "../../client/invoke-transport.ts";
import { recordingServerForFile } from "../support/recording-server.ts";

/**
 * The Invoke transport hands the API function the event API Gateway would: under the route key the
 * request matches, with its path parameters, never `$default` (the function runs no route under it).
 * A request no route names is not invoked at all, as API Gateway invokes nothing for it.
 */

// The Lambda Invoke API, answering as the API function does.
const server = recordingServerForFile(() => JSON.stringify({ statusCode: 200, headers: {}, body: "{}" }));
/** The events the API function was invoked with, oldest first. */
const events = () => server().received.map((r) => JSON.parse(r.body) as Record<string, unknown>);

it("sends the route key the request matches, and its path parameters", async () => {
  const transport = invokeTransport({ functionName: "api", endpoint: server().url });
  try {
    const cases = [
      [
        { method: "GET", path: "/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV" },
        "GET /jobs/{id}",
        { id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" },
      ],
      [{ method: "POST", path: "/jobs/batch", body: { jobs: [] } }, "POST /jobs/batch", undefined],
      [{ method: "POST", path: "/queues/default/pause" }, "POST /queues/{name}/pause", { name: "default" }],
      [{ method: "HEAD", path: "/health" }, "HEAD /health", undefined],
    ] as const;
    for (const [request, routeKey, pathParameters] of cases) {
      await transport.send(request);
      const event = events().at(-1) as { routeKey: string; requestContext: { routeKey: string } };
      expect(event.routeKey).toBe(routeKey);
      expect(event.requestContext.routeKey).toBe(routeKey);
      expect((event as { pathParameters?: unknown }).pathParameters).toEqual(pathParameters);
    }
  } finally {
    transport.close();
  }
});

it("invokes nothing for a request no route names (a path variant included)", async () => {
  const transport = invokeTransport({ functionName: "api", endpoint: server().url });
  const before = events().length;
  try {
    for (const [method, path] of [
      ["GET", "/jobs/"],
      ["POST", "/queues//pause"],
      ["DELETE", "/jobs"],
    ] as const) {
      const err = await transport.send({ method, path }).then(
        () => expect.unreachable("expected a failure"),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SkyforgeTransportError);
      expect((err as Error).message).toMatch(
        /^no route of the API takes .*; deployed, API Gateway answers 404/,
      );
      expect((err as SkyforgeTransportError).answer).toEqual({ status: 404, body: undefined });
    }
    expect(events().length).toBe(before);
  } finally {
    transport.close();
  }
});
