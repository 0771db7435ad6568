import type { Context } from "aws-lambda";
import { describe, expect, it, test } from "vitest";
import type { HttpEvent } from "../../lib/api/http.ts";
import { API_ROUTE_KEYS, apiRouteMatcher } from "../../lib/api/route-keys.ts";
import { apiRoutes, createApiHandler } from "../../lib/api/routes.ts";
import { unreachableEngine } from "../support/unreachable-engine.ts";

/** Building the routes only wires handlers: nothing is sent. */
const engine = unreachableEngine;

test("infra declares exactly the routes the API serves", () => {
  const served = apiRoutes(engine()).map((r) => `${r.method} ${r.path}`);
  expect([...served].sort()).toEqual([...API_ROUTE_KEYS].sort());
});

describe("route keys match exactly", () => {
  it("names the route and its raw path parameters, preferring a fixed segment to a {name}", () => {
    expect(apiRouteMatcher.find("GET", "/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV")).toEqual({
      routeKey: "GET /jobs/{id}",
      pathParameters: { id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" },
    });
    expect(apiRouteMatcher.find("POST", "/jobs/batch")?.routeKey).toBe("POST /jobs/batch");
    expect(apiRouteMatcher.find("GET", "/jobs/batch")?.routeKey).toBe("GET /jobs/{id}");
    expect(apiRouteMatcher.find("POST", "/queues/a%2Fb/pause")?.pathParameters).toEqual({ name: "a%2Fb" });
    expect(apiRouteMatcher.find("HEAD", "/health")?.routeKey).toBe("HEAD /health");
  });

  it("takes no variant of a path: a trailing slash, an empty segment, another case, a suffix", () => {
    for (const [method, path] of [
      ["GET", "/jobs/"],
      ["GET", "/health/"],
      ["POST", "/queues/default/pause/"],
      ["POST", "/queues//pause"],
      ["POST", "//queues/default/pause"],
      ["GET", "/JOBS"],
      ["GET", "/jobs.json"],
      ["GET", "/jobs/x/y"],
      ["GET", ""],
    ] as const) {
      expect(apiRouteMatcher.find(method, path), `${method} ${path}`).toBeUndefined();
      expect(apiRouteMatcher.methods(path), path).toEqual([]);
    }
    expect(apiRouteMatcher.methods("/jobs")).toEqual(["GET", "POST"]);
  });
});

describe("the API function", () => {
  const handler = createApiHandler(engine());
  const answer = async (routeKey: string, method: string, path: string) => {
    const event = {
      version: "2.0",
      routeKey,
      rawPath: path,
      rawQueryString: "",
      headers: {},
      requestContext: { http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "" } },
      isBase64Encoded: false,
    } as unknown as HttpEvent;
    const res = await handler(event, {} as Context);
    return {
      status: res.statusCode,
      code: res.statusCode === 200 ? undefined : JSON.parse(res.body ?? "").error.code,
    };
  };

  it("runs the route API Gateway matched, for exactly its path", async () => {
    expect(await answer("GET /health", "GET", "/health")).toEqual({ status: 200, code: undefined });
  });

  it("runs no route under $default, nor for a path variant of the matched route", async () => {
    expect(await answer("$default", "GET", "/health")).toEqual({ status: 404, code: "not_found" });
    expect(await answer("GET /health", "GET", "/health/")).toEqual({ status: 404, code: "not_found" });
    expect(await answer("GET /jobs", "GET", "/health")).toEqual({ status: 404, code: "not_found" });
    expect(await answer("$default", "DELETE", "/health")).toEqual({
      status: 405,
      code: "method_not_allowed",
    });
  });
});
