import type { MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { ClientError, internalErrorBody } from "../errors.ts";
import { MAX_API_BODY_BYTES } from "../limits.ts";
import { errorFields, type Log } from "../observability/log.ts";
import { asClientError } from "./client-errors.ts";

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** One route: `METHOD /path/{name}` is its API Gateway route key (lib/api/route-keys.ts). */
export interface ApiRoute {
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  handler: (e: HttpEvent) => Promise<HttpResult>;
}

export const route = (
  method: ApiRoute["method"],
  path: string,
  handler: (e: HttpEvent) => Promise<HttpResult>,
): ApiRoute => ({ method, path, handler });

export function json(statusCode: number, body: unknown): HttpResult {
  return { statusCode, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

/** A HEAD answer from a GET handler: the same status and headers, the length the body would have, no body. */
export const withoutBody =
  (get: (e: HttpEvent) => Promise<HttpResult>) =>
  async (event: HttpEvent): Promise<HttpResult> => {
    const { body, ...rest } = await get(event);
    return { ...rest, headers: { ...rest.headers, "content-length": String(Buffer.byteLength(body ?? "")) } };
  };

/** Request bodies are JSON text: UTF-8 (RFC 8259), not compressed. Anything else is refused, not guessed at. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function refuseUnsupportedEncoding(headers: HttpEvent["headers"]): void {
  const encoding = (headers["content-encoding"] ?? "").trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw new ClientError(
      "unsupported_media_type",
      `content-encoding "${clip(encoding)}" is not supported; send the body uncompressed`,
    );
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers["content-type"] ?? "")?.[1]?.toLowerCase();
  if (charset && charset !== "utf-8" && charset !== "utf8") {
    throw new ClientError(
      "unsupported_media_type",
      `charset "${clip(charset)}" is not supported; send UTF-8 JSON`,
    );
  }
}

/**
 * The body's size in bytes as sent, without decoding it: a base64 body's from its length, a text
 * body's from its UTF-8 length (counted, not copied).
 */
function sentBytes(event: HttpEvent, body: string): number {
  if (!event.isBase64Encoded) return Buffer.byteLength(body, "utf8");
  const padding = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - padding;
}

/**
 * The request body as JSON; a malformed body is the caller's mistake, never a 500. A body over
 * `maxBytes` (the route's cap, lib/limits.ts) is a 413 before it is decoded or parsed: parsing a
 * few MB of JSON costs far more time and memory than reading it, and no route takes that much.
 */
export function readJsonBody(event: HttpEvent, maxBytes = MAX_API_BODY_BYTES): unknown {
  refuseUnsupportedEncoding(event.headers ?? {});
  if (!event.body) throw new ClientError("validation_error", "a JSON body is required");
  const bytes = sentBytes(event, event.body);
  if (bytes > maxBytes) {
    throw new ClientError(
      "payload_too_large",
      `the request body is over ${maxBytes} bytes (${bytes}), the most this route takes`,
    );
  }
  let text = event.body;
  if (event.isBase64Encoded) {
    try {
      text = utf8.decode(Buffer.from(event.body, "base64"));
    } catch {
      throw new ClientError("unsupported_media_type", "the body is not UTF-8; send JSON encoded as UTF-8");
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ClientError("validation_error", "the body is not valid JSON");
  }
}

/**
 * A path segment as the client meant it. A malformed escape (`/jobs/%ZZ`) names nothing: it is the
 * caller's mistake (400), never a URIError that becomes a 500.
 */
export function pathParam(event: HttpEvent, name: string): string {
  const value = event.pathParameters?.[name];
  if (!value) throw new ClientError("validation_error", `missing path parameter ${name}`);
  try {
    return decodeURIComponent(value);
  } catch {
    throw new ClientError("validation_error", `path parameter ${name} is not valid percent-encoding`, [
      { path: name, message: `"${clip(value)}" has a malformed %-escape` },
    ]);
  }
}

/**
 * The query string as one value per name. A name given twice (`?limit=1&limit=2`) is refused: API
 * Gateway would join the values with a comma and Node's parsers keep one of them, so no reading of
 * it is safe to guess. Read from `rawQueryString`, the same on API Gateway and locally.
 */
export function queryParams(event: HttpEvent): Record<string, string> {
  if (event.rawQueryString === undefined) return { ...event.queryStringParameters } as Record<string, string>;
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(event.rawQueryString)) {
    if (params.has(name)) {
      throw new ClientError(
        "validation_error",
        `query parameter "${clip(name)}" is given more than once; give it once`,
        [{ path: name, message: "repeated" }],
      );
    }
    params.set(name, value);
  }
  // fromEntries defines own properties, so a name like `__proto__` stays a plain key for the schema to refuse.
  return Object.fromEntries(params);
}

export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): HttpResult {
  const body = new ClientError(
    "method_not_allowed",
    `${clip(method)} is not allowed on ${clip(path)}; allowed: ${allowed.join(", ")}`,
  ).toBody();
  return { ...json(405, body), headers: { "content-type": "application/json", allow: allowed.join(", ") } };
}

/** Echoes a caller's value in a message without echoing kilobytes of it. */
export const clip = (value: string, max = 80): string =>
  value.length > max ? `${value.slice(0, max)}…` : value;

/**
 * Maps a client error (or a store error standing for one) to its 4xx body. Anything else is ours: logged with its stack, answered with a
 * bare 500 so internals never leak.
 */
export function errorResponder(log: Log): MiddlewareObj<HttpEvent, HttpResult> {
  return {
    onError: async (request) => {
      const err = request.error;
      const client = asClientError(err);
      if (client) {
        request.response = json(client.httpStatus, client.toBody());
        return;
      }
      log.error("unhandled API error", {
        path: request.event.rawPath,
        ...errorFields(err),
      });
      request.response = json(500, internalErrorBody());
    },
  };
}
