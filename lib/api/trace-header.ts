import { traceFrom } from "../observability/tracing.ts";
import type { HttpEvent } from "./http.ts";

/** A header by name, whatever its case (API Gateway lower-cases them; a local server may not). */
function header(event: HttpEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * The producer's W3C trace context from a request's `traceparent` (and `tracestate`) headers, as a
 * job stores it (lib/observability/tracing.ts). A malformed header is ignored: the job is enqueued
 * without a parent trace, never refused for it (docs/architecture.md §23).
 */
export function requestTrace(event: HttpEvent): string | undefined {
  return traceFrom(header(event, "traceparent"), header(event, "tracestate"));
}

/** The same from an Invoke payload's `traceparent`/`tracestate` fields, and the request without them. */
export function invokeTrace(event: unknown): { request: unknown; trace?: string } {
  if (!event || typeof event !== "object" || Array.isArray(event) || !("traceparent" in event))
    return { request: event };
  const { traceparent, tracestate, ...request } = event as Record<string, unknown>;
  const trace = traceFrom(traceparent, tracestate);
  return trace === undefined ? { request } : { request, trace };
}
