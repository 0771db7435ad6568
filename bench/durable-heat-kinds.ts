import * as z from "zod";
import type { App } from "../lib/declarations/define-app.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import type { WaitToken } from "../lib/job/durable.ts";
import { defineUnboundKind } from "../lib/job/kind.ts";
import { BENCH_LEASE_SECONDS, smallStepsKind, stepsKind } from "./durable-kind.ts";

/**
 * The scale model's durable kinds (docs/guide/scale.md, scripts/bench-heat-durable.ts): each does
 * one kind of durable call and nothing else, so a scenario meters that call's DynamoDB keys. The
 * steps kinds are the durable bench's own (bench/durable-kind.ts). Bench-only, never deployed.
 */
export const HEAT_TOKEN_KIND = "heat-token";
export const HEAT_EVENT_KIND = "heat-event";
export const HEAT_INVOKE_KIND = "heat-invoke";
/** The one event name every event wait of the model waits for; the match is the payload's. */
export const HEAT_EVENT = "heat.paid";
/** Long enough that no wait times out in a run; past SQS's 15 minutes, so a wait's job enters the status index. */
const WAIT_SECONDS = 3600;

const Match = z.object({ match: z.string() });

/**
 * The tokens the token kind's jobs made, by id: the scenario completes each as a third party holding
 * its url would (a rerun of a job gets its recorded token back, so an id comes once).
 */
export const madeTokens = new Map<string, WaitToken>();

export const heatTokenKind = defineUnboundKind({
  name: HEAT_TOKEN_KIND,
  payload: z.object({ seq: z.number() }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (_payload, ctx) => {
    const token = await ctx.createToken("approval", { timeoutSeconds: WAIT_SECONDS });
    madeTokens.set(token.id, token);
    await ctx.waitForToken(token);
    return null;
  },
});

export const heatEventKind = defineUnboundKind({
  name: HEAT_EVENT_KIND,
  payload: Match,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ match }, ctx) => {
    await ctx.waitForEvent("paid", { event: HEAT_EVENT, match, timeoutSeconds: WAIT_SECONDS });
    return null;
  },
});

export const heatInvokeKind = defineUnboundKind({
  name: HEAT_INVOKE_KIND,
  payload: z.object({ seq: z.number() }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ seq }, ctx) => {
    await ctx.invoke("echo", { seq, pad: "" });
    return null;
  },
});

/**
 * `app` with the model's durable kinds added and `default`'s lease the durable bench's (a renewal on
 * this shared machine would add job-item writes a run on AWS never makes: bench/durable-kind.ts).
 */
export const durableHeatApp = (app: App): App =>
  defineApp({
    ...app,
    queues: app.queues.map((q) => (q.name === "default" ? { ...q, leaseSeconds: BENCH_LEASE_SECONDS } : q)),
    kinds: [...app.kinds, stepsKind, smallStepsKind, heatTokenKind, heatEventKind, heatInvokeKind],
  });
