import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { HttpEvent } from "../lib/api/http.ts";
import type { RouteTarget } from "../lib/api/route-keys.ts";

/** The request target split as API Gateway sees it: the raw path (no dot-segment or `//` folding) and query. */
export function splitTarget(target: string): { path: string; query: string } {
  // An absolute-form target (`GET http://host/x HTTP/1.1`) names the same resource as its path.
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target)?.[0] ?? "";
  const rest = target.slice(origin.length) || "/";
  const q = rest.indexOf("?");
  const path = q < 0 ? rest : rest.slice(0, q);
  return { path: path.split("#")[0] || "/", query: q < 0 ? "" : rest.slice(q + 1).split("#")[0] || "" };
}

/**
 * An API Gateway v2 (payload format 2.0) event for the local API, shaped the way API Gateway shapes
 * it: under the route key the request matched (there is no `$default` route), with that route's path
 * parameters; a repeated query name has its values joined by commas, and a body that is not UTF-8
 * comes base64-encoded (so the API can refuse it rather than read replacement characters).
 */
export function toApiEvent(
  req: IncomingMessage,
  path: string,
  query: string,
  body: Buffer,
  route: RouteTarget,
): HttpEvent {
  const method = req.method ?? "GET";
  const joined = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(query)) {
    const before = joined.get(name);
    joined.set(name, before === undefined ? value : `${before},${value}`);
  }
  // fromEntries defines own properties, so a name like `__proto__` stays a plain key.
  const queryStringParameters = Object.fromEntries(joined);
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]),
  );
  const text = isUtf8(body);
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: route.routeKey,
    rawPath: path,
    rawQueryString: query,
    headers,
    ...(Object.keys(queryStringParameters).length ? { queryStringParameters } : {}),
    ...(Object.keys(route.pathParameters).length ? { pathParameters: route.pathParameters } : {}),
    requestContext: {
      accountId: "local",
      apiId: "local",
      domainName: "127.0.0.1",
      domainPrefix: "local",
      http: {
        method,
        path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body.length ? { body: body.toString(text ? "utf8" : "base64") } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}
