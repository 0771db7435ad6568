import { context, propagation } from "@opentelemetry/api";
import type { TraceOptions } from "./skyforge-client.ts";

/**
 * The headers that carry the producer's trace context (docs/architecture.md §23): the caller's own
 * `traceparent` (with its `tracestate`) when given, else whatever the app's registered propagator
 * injects from the active OpenTelemetry context. With no SDK registered the propagator is a no-op
 * and no header is sent. The API checks the value; a malformed one is ignored there, not refused.
 */
export function traceHeadersFor(options: TraceOptions = {}): Record<string, string> {
  if (options.traceparent !== undefined) {
    return {
      traceparent: options.traceparent,
      ...(options.tracestate !== undefined ? { tracestate: options.tracestate } : {}),
    };
  }
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const { traceparent, tracestate } = carrier;
  if (traceparent === undefined) return {};
  return { traceparent, ...(tracestate ? { tracestate } : {}) };
}
