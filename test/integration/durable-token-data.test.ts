import { PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import type { ClaimsS3 } from "../../lib/claims/claim-store.ts";
import { loadResult } from "../../lib/claims/job-bodies.ts";
import { completeWaitToken, tokenView } from "../../lib/durable/durable-tokens.ts";
import { tokenCallbackHandler } from "../../lib/handlers/token-callback.ts";
import type { WaitToken } from "../../lib/job/durable.ts";
import { MAX_JSON_DEPTH } from "../../lib/job/json-depth.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * A token's data (docs/architecture.md §22) on the real emulators: two completions racing with data
 * over the claim check's threshold, and data nested past the JSON depth limit.
 */
const kinds = [
  defineUnboundKind({
    name: "t-token-data",
    queue: "default",
    payload: z.object({}),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (_p, ctx) => {
      const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
      return { data: await ctx.waitForToken(token) };
    },
  }),
];

const harness = harnessPerTest();

async function waitingToken(h: Harness): Promise<{ jobId: string; token: WaitToken; secret: string }> {
  const { job } = await h.engine.producer.enqueue({ kind: "t-token-data", payload: {} });
  const item = await waitFor(async () => {
    const found = await getJob(h.engine.store, job.id);
    return found?.waiting?.for === "token" ? found : undefined;
  }, "the token wait");
  const token = JSON.parse(item.steps?.approval?.v ?? "") as WaitToken;
  const secret = new URL(token.url, "http://x").searchParams.get("secret") ?? "";
  return { jobId: job.id, token, secret };
}

/** `s3`, with each PutObject held until the test lets it go: the order two writers' objects land in. */
function holdingPuts(s3: ClaimsS3) {
  const held: { go: () => void }[] = [];
  const send = async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof PutObjectCommand) {
      const gate = deferred();
      held.push({ go: () => gate.resolve() });
      await gate.promise;
    }
    return (s3.send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
  };
  return { held, s3: { send } as unknown as ClaimsS3 };
}

/** A JSON text nesting `depth` arrays: `[[[…]]]`. */
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("a token's data", () => {
  it("two completions race with data over 8 KiB: the job resumes with the winner's, not the 409's", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { jobId, token, secret } = await waitingToken(h);
    const puts = holdingPuts(h.engine.claims.s3);
    const racing = { ...h.engine, claims: { ...h.engine.claims, s3: puts.s3 } };
    const pad = "x".repeat(10_000);
    const first = { by: "first", pad };
    const second = { by: "second", pad };
    // Both passed every check and hold their object's put: neither has completed the token yet.
    const answers = [
      completeWaitToken(racing, token.id, secret, first),
      completeWaitToken(racing, token.id, secret, second),
    ];
    await waitFor(async () => puts.held.length === 2, "both completions to put their data");
    // The first put lands and its completion wins; the second's put lands after it, then loses.
    puts.held[0]?.go();
    const winner = await Promise.race(answers.map((a, i) => a.then(() => i)));
    puts.held[1]?.go();
    const outcomes = (await Promise.allSettled(answers)).map((s) =>
      s.status === "fulfilled" ? "completed" : (s.reason as { code: string }).code,
    );
    expect(outcomes.sort()).toEqual(["completed", "conflict"]);
    const won = winner === 0 ? first : second;
    expect((await tokenView(h.engine, token.id)).data).toEqual(won);
    const done = await settled(h, jobId, "done");
    expect(JSON.parse((await loadResult(h.engine.claims, done)) ?? "")).toEqual({ data: won });
  });

  it(`data nested deeper than ${MAX_JSON_DEPTH} is a 400 naming it, never a 500 nor the job's result; the token stays pending`, async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { jobId, token, secret } = await waitingToken(h);
    const callback = tokenCallbackHandler(h.engine);
    const post = async (body: string) => {
      const event = httpApiEvent({ method: "POST", path: `/tokens/${token.id}`, query: `secret=${secret}` });
      const out = await callback(
        { ...event, body: Buffer.from(body).toString("base64"), isBase64Encoded: true },
        {} as never,
      );
      return { status: out.statusCode, body: JSON.parse(String(out.body)) };
    };
    for (const depth of [5_000, 3_000, MAX_JSON_DEPTH + 1]) {
      const refused = await post(`{"data":${nested(depth)}}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "validation_error" });
      expect(refused.body.error.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels`);
      expect((await tokenView(h.engine, token.id)).status).toBe("pending");
    }
    const taken = await post(`{"data":${nested(MAX_JSON_DEPTH)}}`);
    expect(taken.status).toBe(200);
    const done = await settled(h, jobId, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ data: JSON.parse(nested(MAX_JSON_DEPTH)) });
  });

  it(`an event's data nested deeper than ${MAX_JSON_DEPTH} is a 400 too`, async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const api = createApiHandler(h.engine);
    for (const depth of [5_000, MAX_JSON_DEPTH + 1]) {
      const event = httpApiEvent({ method: "POST", path: "/events" });
      const body = `{"name":"order.paid","match":"o-1","data":${nested(depth)}}`;
      const out = await api(
        { ...event, body: Buffer.from(body).toString("base64"), isBase64Encoded: true },
        {} as never,
      );
      expect(out.statusCode).toBe(400);
      expect(JSON.parse(String(out.body)).error.code).toBe("validation_error");
    }
  });
});
