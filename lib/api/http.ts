import type { MiddlewareObj } from "@middy/core";
import type { Route } from "@middy/http-router";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { ClientError, internalErrorBody } from "../errors.ts";
import type { Log } from "../observability/log.ts";
import { asClientError } from "./client-errors.ts";

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

export type ApiRoute = Route<HttpEvent, HttpResult>;

export const route = (
  method: ApiRoute["method"],
  path: string,
  handler: (e: HttpEvent) => Promise<HttpResult>,
): ApiRoute => ({ method, path, handler });

export function json(statusCode: number, body: unknown): HttpResult {
  return { statusCode, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

/** The request body as JSON; a malformed body is the caller's mistake, never a 500. */
export function readJsonBody(event: HttpEvent): unknown {
  if (!event.body) throw new ClientError("validation_error", "a JSON body is required");
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  try {
    return JSON.parse(text);
  } catch {
    throw new ClientError("validation_error", "the body is not valid JSON");
  }
}

export function pathParam(event: HttpEvent, name: string): string {
  const value = event.pathParameters?.[name];
  if (!value) throw new ClientError("validation_error", `missing path parameter ${name}`);
  return decodeURIComponent(value);
}

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
        error: err instanceof Error ? err.message : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
      request.response = json(500, internalErrorBody());
    },
  };
}
