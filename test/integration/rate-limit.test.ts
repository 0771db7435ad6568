import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import type { RateLimitScope } from "../../lib/declarations/rate-limit-scope.ts";
import type { RateLimitAnswer } from "../../lib/job/kind.ts";
import { RateLimiter } from "../../lib/rate-limit/rate-limiter.ts";
import { TatMemory } from "../../lib/rate-limit/tat-memory.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { reserveStart } from "../../lib/store/rate-limit-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";

const partner = app.rateLimits.find((s) => s.scope === "partner-api") as RateLimitScope;
/** A fractional emission interval (333.33 ms), where float and decimal arithmetic meet. */
const thirds: RateLimitScope = { scope: "thirds", capacity: 3, refillPerSecond: 3 };
const SCOPES = [partner, thirds];

/** 40 takes at once: eight times the largest bucket, so demand is over supply at every step. */
const WORKERS = 8;
const ACQUIRES_PER_WORKER = 5;

/**
 * Clock steps (ms) for the "demand exceeds supply" runs. Each refills fewer than `capacity` tokens, so
 * the bucket never overflows and every refilled token is granted: the total is then exactly
 * capacity + floor(refillPerSecond × elapsed).
 */
const STEPS: Record<string, number[]> = {
  "partner-api": [1000, 500, 2000, 250, 750, 1300, 700, 1999, 1],
  thirds: [333, 1, 334, 666, 100, 566, 500, 250, 417],
};

describe.each(dynamoBackends)("rate limiter on $name", (factory) => {
  /** Every command the client sent, by name, recorded by a client middleware. */
  const sent: string[] = [];
  const client = clientOn(factory, (c) =>
    c.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? "?");
        return next(args);
      },
      { step: "initialize", name: "recordCommands" },
    ),
  );

  async function setup() {
    const clock = new ManualClock();
    const store = createStoreContext(client(), await freshTable(client(), "rate"), clock);
    const limiter = () => new RateLimiter({ store, scopes: SCOPES });
    return { clock, store, limiter };
  }

  /** The commands sent while `run` ran. */
  async function commandsDuring(run: () => Promise<unknown>): Promise<string[]> {
    const from = sent.length;
    await run();
    return sent.slice(from);
  }

  const grants = (answers: RateLimitAnswer[]) => answers.filter((a) => a.granted).length;

  it.each(SCOPES)(
    "$scope: many workers at once grant exactly capacity + floor(refill × elapsed), never more",
    async (scope) => {
      const { clock, limiter } = await setup();
      const workers = Array.from({ length: WORKERS }, limiter);
      const burst = () =>
        Promise.all(
          workers.flatMap((w) => Array.from({ length: ACQUIRES_PER_WORKER }, () => w.acquire(scope.scope))),
        );

      let granted = grants(await burst());
      expect(granted).toBe(scope.capacity);

      let elapsed = 0;
      for (const step of STEPS[scope.scope] ?? []) {
        clock.advance(step);
        elapsed += step;
        const answers = await burst();
        granted += grants(answers);
        expect(granted).toBe(scope.capacity + Math.floor((scope.refillPerSecond * elapsed) / 1000));
        for (const a of answers) if (!a.granted) expect(a.waitMs).toBeGreaterThan(0);
      }

      // A long idle spell refills the bucket only up to its capacity: supply now falls short of the bound.
      clock.advance(60_000);
      elapsed += 60_000;
      granted += grants(await burst());
      expect(granted).toBe(
        scope.capacity * 2 + Math.floor((scope.refillPerSecond * (elapsed - 60_000)) / 1000),
      );
      expect(granted).toBeLessThanOrEqual(
        scope.capacity + Math.floor((scope.refillPerSecond * elapsed) / 1000),
      );
    },
  );

  it("a denial's waitMs is exact: one ms earlier is still denied, after it a grant succeeds", async () => {
    const { clock, limiter } = await setup();
    const worker = limiter();
    for (let i = 0; i < partner.capacity; i++)
      expect(await worker.acquire("partner-api")).toEqual({ granted: true });
    const denied = await worker.acquire("partner-api");
    expect(denied).toEqual({ granted: false, waitMs: 1000 / partner.refillPerSecond });
    if (denied.granted) return;

    clock.advance(denied.waitMs - 1);
    // A fresh worker knows nothing and learns the bucket from the store's answer.
    expect(await limiter().acquire("partner-api")).toEqual({ granted: false, waitMs: 1 });
    expect(await worker.acquire("partner-api")).toEqual({ granted: false, waitMs: 1 });

    clock.advance(1);
    expect(await worker.acquire("partner-api")).toEqual({ granted: true });
    expect(await limiter().acquire("partner-api")).toMatchObject({ granted: false });
  });

  it("costs: a grant is one UpdateItem; a denial the cache already knows sends nothing", async () => {
    const { limiter } = await setup();
    const worker = limiter();
    expect(await commandsDuring(() => worker.acquire("partner-api"))).toEqual(["UpdateItemCommand"]);
    // Warm cache, busy bucket: still one write per grant.
    for (let i = 1; i < partner.capacity; i++) {
      expect(await commandsDuring(() => worker.acquire("partner-api"))).toEqual(["UpdateItemCommand"]);
    }

    // A throttled hot loop is free.
    const hotLoop = await commandsDuring(async () => {
      for (let i = 0; i < 1_000; i++) expect((await worker.acquire("partner-api")).granted).toBe(false);
    });
    expect(hotLoop).toEqual([]);

    // A worker that never saw the bucket pays one losing write (plus, where the emulator doesn't
    // return the item with the failure, one consistent read), then its cache answers.
    const fresh = limiter();
    const firstDenial = await commandsDuring(() => fresh.acquire("partner-api"));
    expect(firstDenial[0]).toBe("UpdateItemCommand");
    expect(firstDenial.slice(1).every((c) => c === "GetItemCommand")).toBe(true);
    expect(firstDenial.length).toBeLessThanOrEqual(2);
    expect(await commandsDuring(() => fresh.acquire("partner-api"))).toEqual([]);
  });

  it("a flow rate's reservation is one UpdateItem a start, idle or busy, once its tat is known; a wrong guess costs one lost write", async () => {
    const { clock, store } = await setup();
    const bucket = { scope: "flow:timeline", key: "k" };
    const tats = new TatMemory();
    const reserve = async () => {
      const reserved = await reserveStart(store, bucket, clock.now(), 200, tats.get(bucket));
      tats.remember(bucket, reserved.tat);
      return reserved;
    };
    const updates = (commands: string[]) => commands.filter((c) => c === "UpdateItemCommand").length;
    // An idle bucket (never used, then one left to go idle): the idle form first, one write.
    expect(await commandsDuring(reserve)).toEqual(["UpdateItemCommand"]);
    clock.advance(1000);
    expect(await commandsDuring(reserve)).toEqual(["UpdateItemCommand"]);
    // Busy (starts closer than the interval): the known tat picks the busy form, one write each.
    for (let i = 0; i < 3; i++) {
      let before: number | undefined;
      expect(
        await commandsDuring(async () => {
          before = (await reserve()).before;
        }),
      ).toEqual(["UpdateItemCommand"]);
      expect(before).toBeGreaterThanOrEqual(clock.now());
    }
    // Another process's guess from an idle bucket it saw long ago: one lost write, then the right one
    // (plus a read where the emulator doesn't return the item with the failure).
    const stale = await commandsDuring(() =>
      reserveStart(store, bucket, clock.now(), 200, clock.now() - 5000),
    );
    expect(updates(stale)).toBe(2);
    expect(stale.length - updates(stale)).toBeLessThanOrEqual(1);
  });

  it("scopes are independent buckets", async () => {
    const { limiter } = await setup();
    const worker = limiter();
    expect(await worker.acquire("partner-api", partner.capacity)).toEqual({ granted: true });
    expect((await worker.acquire("partner-api")).granted).toBe(false);
    expect(await worker.acquire("thirds", thirds.capacity)).toEqual({ granted: true });
  });

  it("a key has a bucket of its own within its scope: many workers at once grant each key exactly its capacity", async () => {
    const { clock, limiter } = await setup();
    const workers = Array.from({ length: WORKERS }, limiter);
    const keys = ["tenant-a", "tenant-b", "gold-#/ünicode"];
    const burst = () =>
      Promise.all(
        keys.map(async (key) =>
          grants(await Promise.all(workers.map((w) => w.acquire("partner-api", { key })))),
        ),
      );
    expect(await burst()).toEqual(keys.map(() => partner.capacity));
    // The scope's own bucket is untouched by the keys' takes.
    expect(await workers[0]?.acquire("partner-api", partner.capacity)).toEqual({ granted: true });
    // Each key refills on its own: 1 s brings refillPerSecond tokens to every key.
    clock.advance(1000);
    expect(await burst()).toEqual(keys.map(() => partner.refillPerSecond));
    // Tokens and a key together.
    clock.advance(60_000);
    expect(await workers[1]?.acquire("partner-api", { key: "tenant-a", tokens: partner.capacity })).toEqual({
      granted: true,
    });
    expect((await workers[1]?.acquire("partner-api", { key: "tenant-a" }))?.granted).toBe(false);
  });

  it("a key that is empty, not a string or over 256 characters throws, naming the scope, without a request", async () => {
    const { limiter } = await setup();
    const worker = limiter();
    const commands = await commandsDuring(async () => {
      for (const key of ["", "k".repeat(257), 42 as unknown as string])
        await expect(worker.acquire("partner-api", { key })).rejects.toThrow(
          /^rate-limit scope "partner-api": key must be a non-empty string of at most 256 characters, got /,
        );
    });
    expect(commands).toEqual([]);
    expect(await worker.acquire("partner-api", { key: "k".repeat(256) })).toEqual({ granted: true });
  });

  it("an unknown scope or more tokens than capacity throws, without a request", async () => {
    const { limiter } = await setup();
    const worker = limiter();
    const commands = await commandsDuring(async () => {
      await expect(worker.acquire("partner")).rejects.toThrow(
        'unknown rate-limit scope "partner"; declared scopes: partner-api, thirds',
      );
      await expect(worker.acquire("partner-api", partner.capacity + 1)).rejects.toThrow(/capacity is 5/);
    });
    expect(commands).toEqual([]);
  });
});
