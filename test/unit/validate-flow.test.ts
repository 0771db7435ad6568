import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { type Declarations, validateDeclarations } from "../../lib/declarations/validate-app.ts";

/**
 * Flow control declarations (docs/guide/flow-control.md, "Refused declarations"): each refusal names the
 * kind and the field; the demo kinds tenant-echo and tenant-rate pass.
 */
const real: Declarations = app;
type Kind = Declarations["kinds"][number];
const withKind = (name: string, patch: Record<string, unknown>): string[] =>
  validateDeclarations({
    ...real,
    kinds: real.kinds.map((k) => (k.name === name ? ({ ...k, ...patch } as Kind) : k)),
  });
const key = (p: { tenant: string }) => p.tenant;

describe("flow control declarations", () => {
  test("the demo kinds pass", () => {
    expect(validateDeclarations(real)).toEqual([]);
  });

  test.each([
    [
      { key, concurrency: 0 },
      'kind "tenant-echo": flow.concurrency must be a whole number from 1 to 1000, got 0',
    ],
    [
      { key, concurrency: 1.5 },
      'kind "tenant-echo": flow.concurrency must be a whole number from 1 to 1000, got 1.5',
    ],
    [{ key }, 'kind "tenant-echo": flow needs a concurrency, a rate or both'],
    [
      { key: "tenant", concurrency: 2 },
      'kind "tenant-echo": flow.key must be a function of the payload that returns the key',
    ],
    [
      { key, rate: { limit: 0, periodSeconds: 1 } },
      'kind "tenant-echo": flow.rate.limit must be over 0, got 0',
    ],
    [
      { key, rate: { limit: 5, periodSeconds: 0 } },
      'kind "tenant-echo": flow.rate.periodSeconds must be over 0, got 0',
    ],
    [
      { key, rate: { limit: 5, periodSeconds: 1, burst: 0 } },
      'kind "tenant-echo": flow.rate.burst must be a whole number from 1, got 0',
    ],
  ])("flow %o is refused", (flow, problem) => {
    expect(withKind("tenant-echo", { flow })).toEqual([problem]);
  });

  test("a lane without a claim, a batch kind, or a debounce on the same kind is refused", () => {
    expect(withKind("tenant-echo", { lane: "at-least-once" })).toEqual([
      'kind "tenant-echo": flow control needs a claimed lane (fenced or lean), not "at-least-once": a run without a claim can\'t hold its key\'s place',
    ]);
    expect(withKind("tenant-echo", { lane: "lean" })).toEqual([]);
    expect(withKind("batch-echo", { flow: { key, concurrency: 2 } })).toEqual([
      "kind \"batch-echo\": a batch kind can't declare flow (its batch key's maxKeyConcurrency bounds its calls)",
    ]);
    expect(withKind("doc-index", { flow: { key, concurrency: 2 } })).toEqual([
      'kind "doc-index": flow with debounce or singleton on one kind is not supported',
    ]);
  });
});
