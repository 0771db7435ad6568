import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import { type Declarations, validateDeclarations } from "../../lib/declarations/validate-app.ts";

/**
 * Debounce and singleton declarations (docs/guide/flow-control.md, "Refused declarations"): each refusal
 * names the kind and the field, and the app's own demo kinds pass.
 */
const real: Declarations = app;
type Kind = Declarations["kinds"][number];
const withKind = (name: string, patch: Partial<Kind> | Record<string, unknown>): string[] =>
  validateDeclarations({
    ...real,
    kinds: real.kinds.map((k) => (k.name === name ? ({ ...k, ...patch } as Kind) : k)),
  });
const key = (p: { doc: string }) => p.doc;
const trailing = { key, periodSeconds: 2, maxDelaySeconds: 10, mode: "trailing" as const };

describe("debounce and singleton declarations", () => {
  test("the demo kinds pass", () => {
    expect(validateDeclarations(real)).toEqual([]);
  });

  test.each([
    [
      { ...trailing, periodSeconds: 0 },
      'kind "doc-index": debounce.periodSeconds must be over 0 and at most 43200 (12 h), got 0',
    ],
    [
      { ...trailing, periodSeconds: -1 },
      'kind "doc-index": debounce.periodSeconds must be over 0 and at most 43200 (12 h), got -1',
    ],
    [
      { ...trailing, periodSeconds: 43_201, maxDelaySeconds: undefined },
      'kind "doc-index": debounce.periodSeconds must be over 0 and at most 43200 (12 h), got 43201',
    ],
    [
      { ...trailing, maxDelaySeconds: 1 },
      'kind "doc-index": debounce.maxDelaySeconds 1 is below periodSeconds 2; a burst would close before its first period',
    ],
    [
      { ...trailing, mode: "sliding" },
      'kind "doc-index": debounce.mode "sliding" is not one of trailing, leading, collect',
    ],
    [
      { ...trailing, key: "doc" },
      'kind "doc-index": debounce.key must be a function of the payload that returns the key',
    ],
  ])("a debounce %o is refused", (debounce, problem) => {
    expect(withKind("doc-index", { debounce })).toEqual([problem]);
  });

  test("a burst whose message would come back more than half the queue's maxReceiveCount is refused", () => {
    expect(withKind("doc-index", { debounce: { ...trailing, maxDelaySeconds: 3600 } })).toEqual([
      'kind "doc-index": a burst\'s message may come back 1800 times (maxDelay / period) before it runs, over half of queue "default"\'s maxReceiveCount 120; shorten debounce.maxDelaySeconds or raise maxReceiveCount',
    ]);
    // Without a declared maximum delay a burst closes after 30 periods: within 60 looks.
    expect(withKind("doc-index", { debounce: { ...trailing, maxDelaySeconds: undefined } })).toEqual([]);
    // A leading burst's message never comes back: no bound needed.
    expect(
      withKind("doc-index", { debounce: { ...trailing, mode: "leading", maxDelaySeconds: 3600 } }),
    ).toEqual([]);
  });

  test("a singleton mode that doesn't exist is refused", () => {
    expect(withKind("doc-sync", { singleton: { key, mode: "cancel-waiting" } })).toEqual([
      'kind "doc-sync": singleton.mode "cancel-waiting" is not one of cancel-running, queue-one',
    ]);
  });

  test("both rules on one kind, a batch kind, or another lane are refused", () => {
    expect(withKind("doc-index", { singleton: { key, mode: "queue-one" } })).toEqual([
      'kind "doc-index": declares both debounce and singleton; pick one',
    ]);
    expect(withKind("batch-echo", { debounce: trailing })).toEqual([
      'kind "batch-echo": a batch kind can\'t also declare debounce (its batch key already gathers its jobs)',
    ]);
    expect(withKind("doc-sync", { lane: "lean" })).toEqual([
      'kind "doc-sync": singleton needs the fenced lane (later enqueues join the job\'s item), not "lean"',
    ]);
  });

  test("a pool kind's debounce is checked the same way", () => {
    const pool = real.poolKinds[0] as PoolKindSpec;
    const problems = validateDeclarations({
      ...real,
      poolKinds: [
        { ...pool, debounce: { ...trailing, key: () => "k", periodSeconds: 0 } },
        ...real.poolKinds.slice(1),
      ],
    });
    expect(problems).toEqual([
      `pool kind "${pool.name}": debounce.periodSeconds must be over 0 and at most 43200 (12 h), got 0`,
    ]);
  });
});
