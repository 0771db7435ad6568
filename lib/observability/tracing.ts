import {
  type Attributes,
  type Context,
  context,
  createTraceState,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * One trace per job (docs/architecture.md §23). A job carries its producer's W3C trace context as a
 * short string, `traceparent` or `traceparent;tracestate`, on its item and its message; every span
 * skyforge makes goes through `@opentelemetry/api` only, so whatever SDK the app registers exports
 * them and, with none, each call is the API's no-op (a span object, no export, no I/O).
 */

/** The tracer's name: the instrumentation scope every skyforge span carries. */
export const TRACER_NAME = "skyforge";

/** `version-traceid-spanid-flags`, version 00, lower-case hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A tracestate longer than W3C's 512 characters is dropped rather than cut mid-member. */
const MAX_TRACESTATE = 512;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * A producer's header (or Invoke field, or client option) as the job's stored trace: the
 * traceparent if it is well-formed (W3C level 1, version 00, ids not all zero), with its tracestate
 * when that fits. result: undefined for anything else; a malformed context is ignored, never an error.
 */
export function traceFrom(traceparent: unknown, tracestate?: unknown): string | undefined {
  if (typeof traceparent !== "string") return undefined;
  const parent = traceparent.trim().toLowerCase();
  const m = TRACEPARENT.exec(parent);
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return undefined;
  const state = typeof tracestate === "string" ? tracestate.trim() : "";
  // ";" never occurs in a tracestate (its members are key=value separated by ","), so it splits.
  return state && state.length <= MAX_TRACESTATE && !state.includes(";") ? `${parent};${state}` : parent;
}

/** A stored trace as the W3C headers it came from: `{ traceparent, tracestate? }`. */
export function traceHeaders(stored: string | undefined): { traceparent?: string; tracestate?: string } {
  if (!stored) return {};
  const cut = stored.indexOf(";");
  return cut < 0
    ? { traceparent: stored }
    : { traceparent: stored.slice(0, cut), tracestate: stored.slice(cut + 1) };
}

/** A stored trace as an OpenTelemetry context whose (remote) span is the producer's. */
export function contextOfTrace(stored: string | undefined, base: Context = ROOT_CONTEXT): Context {
  const { traceparent, tracestate } = traceHeaders(stored);
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m?.[1] || !m[2] || !m[3]) return base;
  const spanContext: SpanContext = {
    traceId: m[1],
    spanId: m[2],
    traceFlags: Number.parseInt(m[3], 16) & 1,
    isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  };
  return trace.setSpanContext(base, spanContext);
}

/**
 * A span's context as the trace a job it makes stores (its children run under this span).
 * result: undefined for an invalid context (no trace at all: no parent and no SDK).
 */
export function traceOfSpan(span: Span): string | undefined {
  const sc = span.spanContext();
  if (!trace.isSpanContextValid(sc)) return undefined;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, "0");
  const parent = `00-${sc.traceId}-${sc.spanId}-${flags}`;
  // Kept within what traceFrom lets in, so a job's message always fits its schema's bound.
  const state = sc.traceState?.serialize();
  return state && state.length <= MAX_TRACESTATE && !state.includes(";") ? `${parent};${state}` : parent;
}

/**
 * Runs `fn` in a span named `name` under `parent` (a stored trace; else the active context). The
 * span ends when `fn` settles, with an error status when it throws; `fn` runs with the span active,
 * so the app's own spans nest under it where its SDK keeps context. Generic: the run, the enqueue,
 * a group's creation and a durable step all come through here.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  parent?: string,
): Promise<T> {
  const base = parent === undefined ? context.active() : contextOfTrace(parent);
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { attributes }, base);
  try {
    return await context.with(trace.setSpan(base, span), fn, undefined, span);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** A span that ends elsewhere (a batch's enqueue spans end together): under `parent`, else the active context. */
export function startSpan(name: string, attributes: Attributes, parent?: string, kind?: SpanKind): Span {
  const base = parent === undefined ? context.active() : contextOfTrace(parent);
  return trace.getTracer(TRACER_NAME).startSpan(name, { attributes, ...(kind ? { kind } : {}) }, base);
}

/** Marks a span failed with `err` (an Error, or a message). */
export function failSpan(span: Span, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  span.recordException(err instanceof Error ? err : message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Ends a span, failed first when `err` is given. */
export function endSpan(span: Span, err?: unknown): void {
  if (err !== undefined) failSpan(span, err);
  span.end();
}

/** The producer's span for one job (`skyforge.enqueue <kind>`); the job's runs are its children. */
export function enqueueSpan(kind: string, queue: string, parent?: string): Span {
  const attributes = { "skyforge.job.kind": kind, "skyforge.queue": queue };
  return startSpan(`skyforge.enqueue ${kind}`, attributes, parent, SpanKind.PRODUCER);
}

/**
 * Runs one job's enqueue in its producer span (enqueueSpan under `extras.trace`, else the active
 * context); `fn` gets the extras with the trace its job stores (withTraceOf).
 */
export async function withEnqueueSpan<T extends { trace?: string }, R>(
  kind: string,
  queue: string,
  extras: T | undefined,
  fn: (extras: T | undefined, span: Span) => Promise<R>,
): Promise<R> {
  const span = enqueueSpan(kind, queue, extras?.trace);
  try {
    return await fn(withTraceOf(extras, span), span);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * `extras` with the trace its job stores: `span`'s context (the job's runs become its children).
 * With no SDK the span carries its parent's context, so the producer's trace is kept as it came.
 */
export function withTraceOf<T extends { trace?: string }>(extras: T | undefined, span: Span): T | undefined {
  const stored = traceOfSpan(span);
  if (stored === undefined || stored === extras?.trace) return extras;
  return { ...(extras ?? ({} as T)), trace: stored };
}

/** The span attributes of one job (OpenTelemetry's messaging conventions name the rest). */
export function jobAttributes(job: { id: string; kind: string; queue: string }): Attributes {
  return { "skyforge.job.id": job.id, "skyforge.job.kind": job.kind, "skyforge.queue": job.queue };
}

/** A job as the run's span names it: its stored trace is the span's parent. */
interface RunJob {
  id: string;
  kind: string;
  queue: string;
  attempts: number;
  trace?: string;
}

/** One attempt's span, `skyforge.run <kind>`, under the job's stored trace (its enqueue span). */
export function runSpan(job: RunJob): Span {
  const attributes = { ...jobAttributes(job), "skyforge.attempt": job.attempts };
  // No stored trace: a root span (not the active context's, which is whatever polled the queue).
  return startSpan(`skyforge.run ${job.kind}`, attributes, job.trace ?? "", SpanKind.CONSUMER);
}

/** Ends a run's span with its outcome; a retry, a dead end or a pause is an error status. */
export function endRunSpan(span: Span, decision: { outcome: string; error?: string }): void {
  span.setAttribute("skyforge.outcome", decision.outcome);
  if (decision.error !== undefined && decision.outcome !== "throttled" && decision.outcome !== "cancelled")
    span.setStatus({ code: SpanStatusCode.ERROR, message: decision.error });
  span.end();
}

/** Runs `fn` with `span` active, so the app's own spans nest under it where its SDK keeps context. */
export function inSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}
