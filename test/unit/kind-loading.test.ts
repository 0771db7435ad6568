import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { AnyKind } from "../../lib/job/kind.ts";
import { awaitsLoad, KindLoadError, kindReady, moduleLabel } from "../../lib/job/kind-loading.ts";

/** lib/job/kind-loading.ts alone: one load shared by concurrent callers, a bad module named, the label. */
const declared = (load: AnyKind["load"]): AnyKind =>
  ({ name: "k", queue: "default", maxAttempts: 1, timeoutSeconds: 1, load }) as AnyKind;

const module = { default: { payload: z.object({ a: z.number() }), handler: async () => 1 } };

describe("kindReady", () => {
  it("loads once for callers at once, then gives the kind with its schema and handler", async () => {
    let loads = 0;
    const kind = declared(async () => {
      loads++;
      return module;
    });
    const [a, b] = await Promise.all([kindReady(kind), kindReady(kind)]);
    expect(loads).toBe(1);
    expect(a).toBe(kind);
    expect(b).toBe(kind);
    expect(awaitsLoad(kind)).toBe(false);
    expect(kind.payload.safeParse({ a: 1 }).success).toBe(true);
    await kindReady(kind);
    expect(loads).toBe(1);
  });

  it("refuses a module whose default export is not { payload, handler }, naming the kind, and tries again next time", async () => {
    let loads = 0;
    const kind = declared(async () => {
      loads++;
      return { default: { handler: async () => 1 } } as never;
    });
    await expect(kindReady(kind)).rejects.toThrow(KindLoadError);
    await expect(kindReady(kind)).rejects.toThrow(
      /^kind "k": its module .* failed to load: Error: its default export is not \{ payload, handler \}/,
    );
    expect(loads).toBe(2);
    expect(awaitsLoad(kind)).toBe(true);
  });

  it("gives a kind declared whole, or none, as it is", async () => {
    const whole = { ...declared(undefined), payload: z.number(), handler: async () => 1 } as AnyKind;
    expect(await kindReady(whole)).toBe(whole);
    expect(await kindReady(undefined)).toBeUndefined();
  });
});

describe("moduleLabel", () => {
  it("is the specifier the load imports, when its source shows one; else says where to look", () => {
    expect(moduleLabel(declared(() => import("../support/lazy-kinds/lazy-echo.job.ts")))).toMatch(
      /lazy-echo\.job\.ts"$/,
    );
    // As a bundle leaves it: the module inlined, no specifier.
    const bundled = declared((() => Promise.resolve(module)) as AnyKind["load"]);
    expect(moduleLabel(bundled)).toBe("(its load())");
  });
});
