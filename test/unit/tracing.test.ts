import {
  type Context,
  type ContextManager,
  context,
  propagation,
  ROOT_CONTEXT,
  type TextMapPropagator,
  trace,
} from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../client/create-client.ts";
import type { ApiRequest, Transport } from "../../client/transport.ts";
import { invokeTrace } from "../../lib/api/trace-header.ts";
import type { AppNames } from "../../lib/declarations/app-names.ts";
import {
  contextOfTrace,
  enqueueSpan,
  traceFrom,
  traceHeaders,
  traceOfSpan,
  withTraceOf,
} from "../../lib/observability/tracing.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import {
  encodeMessageBody,
  type JobMessage,
  parseJobMessage,
  seedFromMessage,
} from "../../lib/transport/job-message.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const PARENT = `00-${TRACE}-${SPAN}-01`;

describe("a producer's trace context (W3C traceparent)", () => {
  it("keeps a well-formed traceparent, lower-cased, with its tracestate when that fits", () => {
    expect(traceFrom(PARENT)).toBe(PARENT);
    expect(traceFrom(` ${PARENT.toUpperCase()} `)).toBe(PARENT);
    expect(traceFrom(PARENT, "a=1,b=2")).toBe(`${PARENT};a=1,b=2`);
    expect(traceFrom(PARENT, "x".repeat(513))).toBe(PARENT);
    expect(traceFrom(PARENT, 42)).toBe(PARENT);
    expect(traceHeaders(`${PARENT};a=1`)).toEqual({ traceparent: PARENT, tracestate: "a=1" });
    expect(traceHeaders(undefined)).toEqual({});
  });

  it("ignores anything else: another version, a short or non-hex id, all-zero ids, not a string", () => {
    for (const bad of [
      `01-${TRACE}-${SPAN}-01`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-1`,
      `00-${"g".repeat(32)}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `${PARENT}-extra`,
      "",
      42,
      undefined,
      { traceparent: PARENT },
    ])
      expect(traceFrom(bad), String(bad)).toBeUndefined();
  });

  it("with no SDK registered, the enqueue span carries the producer's context, so the job stores it as it came", () => {
    const span = enqueueSpan("echo", "default", `${PARENT};v=1`);
    expect(span.isRecording()).toBe(false);
    expect(traceOfSpan(span)).toBe(`${PARENT};v=1`);
    expect(withTraceOf({ trace: `${PARENT};v=1` }, span)).toEqual({ trace: `${PARENT};v=1` });
    span.end();
    // No parent and no SDK: no trace at all, and the extras untouched.
    const root = enqueueSpan("echo", "default");
    expect(traceOfSpan(root)).toBeUndefined();
    expect(withTraceOf(undefined, root)).toBeUndefined();
    expect(trace.getSpanContext(contextOfTrace("garbage"))).toBeUndefined();
    // A context whose tracestate grew past W3C's 512 characters is kept without it.
    const long = enqueueSpan(
      "echo",
      "default",
      `${PARENT};${Array.from({ length: 32 }, (_, i) => `k${i}=${"v".repeat(20)}`).join(",")}`,
    );
    expect(traceOfSpan(long)).toBe(PARENT);
  });

  it("travels on the message and back: the seed a claim builds the job from, and the message rebuilt from the item", () => {
    const message: JobMessage = {
      v: 1,
      id: "01JTRACE000000000000000000",
      kind: "echo",
      queue: "default",
      maxAttempts: 3,
      priority: "normal",
      createdAt: 1,
      runAt: 1,
      payload: "1",
      trace: `${PARENT};v=1`,
    };
    const parsed = parseJobMessage(encodeMessageBody(message));
    expect(parsed?.trace).toBe(`${PARENT};v=1`);
    const seed = seedFromMessage(parsed as JobMessage);
    expect(seed.trace).toBe(`${PARENT};v=1`);
    const item = { ...seed, pk: "p", sk: "s", status: "queued", attempts: 0 } as JobItem;
    expect(messageFromItem(item, "1").trace).toBe(`${PARENT};v=1`);
  });

  it("an Invoke payload's traceparent field is taken off the request; a malformed one is dropped, not refused", () => {
    expect(invokeTrace({ kind: "echo", payload: 1, traceparent: PARENT, tracestate: "a=1" })).toEqual({
      request: { kind: "echo", payload: 1 },
      trace: `${PARENT};a=1`,
    });
    expect(invokeTrace({ jobs: [], traceparent: "nope" })).toEqual({ request: { jobs: [] } });
    expect(invokeTrace({ kind: "echo" })).toEqual({ request: { kind: "echo" } });
    expect(invokeTrace(null)).toEqual({ request: null });
  });
});

/** Runs `fn` with `ctx` active, synchronously: enough for the client, which reads it before its first await. */
class SyncContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active() {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable() {
    return this;
  }
  disable() {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

/** What a W3C propagator injects: the active span's context as `traceparent`. */
const w3cInject: TextMapPropagator = {
  inject(ctx, carrier, setter) {
    const sc = trace.getSpanContext(ctx);
    if (sc) setter.set(carrier, "traceparent", `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags}`);
  },
  extract: (ctx) => ctx,
  fields: () => ["traceparent"],
};

function recordingClient() {
  const requests: ApiRequest[] = [];
  const transport: Transport = {
    async send(request) {
      requests.push(request);
      return { status: 201, headers: {}, body: answerFor(request) };
    },
  };
  return { requests, client: createClient<AppNames>({ transport }) };
}

const answerFor = (request: ApiRequest) =>
  request.path === "/jobs/batch"
    ? { results: [{ index: 0, id: "01JTRACE000000000000000000", duplicate: false }] }
    : {
        id: "01JTRACE000000000000000000",
        kind: "echo",
        queue: "default",
        status: "queued",
        attempts: 0,
        maxAttempts: 3,
        payload: 1,
        createdAt: new Date(0).toISOString(),
        runAt: new Date(0).toISOString(),
        priority: "normal",
        duplicate: false,
      };

describe("the typed client sends the producer's trace context", () => {
  afterEach(() => {
    propagation.disable();
    context.disable();
  });

  it("an explicit traceparent option goes as headers, not in the request's body", async () => {
    const { requests, client } = recordingClient();
    await client.enqueue("echo", 1, { traceparent: PARENT, tracestate: "a=1" });
    expect(requests[0]?.headers).toEqual({ traceparent: PARENT, tracestate: "a=1" });
    expect(requests[0]?.body).toEqual({ kind: "echo", payload: 1 });
  });

  it("by default, the active OpenTelemetry context's (through the registered propagator); none: no header", async () => {
    const { requests, client } = recordingClient();
    await client.enqueue("echo", 1);
    expect(requests[0]?.headers).toEqual({});
    context.setGlobalContextManager(new SyncContextManager());
    propagation.setGlobalPropagator(w3cInject);
    const active = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    await context.with(active, () => client.enqueue("echo", 1));
    await context.with(active, () => client.enqueueMany([{ kind: "echo", payload: 1 }]));
    expect(requests[1]?.headers).toEqual({ traceparent: PARENT });
    expect(requests[2]?.headers).toEqual({ traceparent: PARENT });
  });
});
