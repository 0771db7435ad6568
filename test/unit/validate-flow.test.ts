import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { type Declarations, validateDeclarations } from "../../lib/declarations/validate-app.ts";

/**
 * Flow control declarations (docs/guide/flow-control.md, "Refused declarations"): each refusal names the
 * kind and the field; the demo kinds tenant-echo, tenant-rate and tenant-report pass.
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

  test("a lane without a claim or a batch kind is refused; a debounced kind may declare flow", () => {
    expect(withKind("tenant-echo", { lane: "at-least-once" })).toEqual([
      'kind "tenant-echo": flow control needs a claimed lane (fenced or lean), not "at-least-once": a run without a claim can\'t hold its key\'s place',
    ]);
    expect(withKind("tenant-echo", { lane: "lean" })).toEqual([]);
    expect(withKind("batch-echo", { flow: { key, concurrency: 2 } })).toEqual([
      "kind \"batch-echo\": a batch kind can't declare flow (its batch key's maxKeyConcurrency bounds its calls)",
    ]);
    expect(withKind("doc-index", { flow: { key, concurrency: 2 } })).toEqual([]);
  });

  describe("a list of limits", () => {
    const user = (p: { user?: string }) => p.user ?? "";
    const llm = () => "llm";
    const llmRate = { limit: 20_000, periodSeconds: 60 };

    test("one, or several with their own names and key functions, pass", () => {
      expect(withKind("tenant-echo", { flow: [{ key, concurrency: 2 }] })).toEqual([]);
      expect(
        withKind("tenant-echo", {
          flow: [
            { key, concurrency: 2 },
            { key: user, concurrency: 1 },
          ],
        }),
      ).toEqual([]);
    });

    test.each([
      [
        "two limits of one name",
        [
          { name: "a", key, concurrency: 2 },
          { name: "a", key: user, concurrency: 1 },
        ],
        'kind "tenant-echo": flow[1].name "a" is also flow[0]\'s: each limit needs its own name',
      ],
      [
        "a name that is another limit's position",
        [
          { key, concurrency: 2 },
          { name: "1", key: user, concurrency: 1 },
        ],
        'kind "tenant-echo": flow[1].name "1" is also flow[0]\'s: each limit needs its own name',
      ],
      [
        "two limits of one key function",
        [
          { name: "a", key, concurrency: 2 },
          { name: "b", key, rate: llmRate },
        ],
        'kind "tenant-echo": flow[1].key is the same function as flow[0].key: two limits of one key are one limit',
      ],
      [
        "more than 4 limits",
        [1, 2, 3, 4, 5].map((n) => ({ key: (p: { tenant: string }) => `${p.tenant}${n}`, concurrency: n })),
        'kind "tenant-echo": flow takes 1 to 4 limits, got 5',
      ],
      ["no limit", [], 'kind "tenant-echo": flow takes 1 to 4 limits, got 0'],
      [
        "a name with other characters",
        [{ name: "LLM budget", key: llm, rate: llmRate }],
        'kind "tenant-echo": flow[0].name must be 1 to 32 lowercase letters, digits and dashes, got "LLM budget"',
      ],
      [
        "an adaptive that is not a boolean",
        [{ name: "llm", key: llm, rate: { ...llmRate, adaptive: "yes" } }],
        'kind "tenant-echo": flow[0].rate.adaptive must be true or false, got yes',
      ],
      [
        "a cost that is not a function",
        [{ name: "llm", key: llm, rate: { ...llmRate, cost: 5 } }],
        'kind "tenant-echo": flow[0].rate.cost must be a function of the payload that returns the units it takes',
      ],
      [
        "a limit of the list without a concurrency or a rate",
        [{ key }, { key: user, concurrency: 0 }],
        'kind "tenant-echo": flow[0] needs a concurrency, a rate or both',
      ],
    ])("%s is refused, naming the kind and the field", (_, flow, problem) => {
      expect(withKind("tenant-echo", { flow })).toContain(problem);
    });

    test("defineApp refuses such a list as the deploy validator does", async () => {
      const { defineApp } = await import("../../lib/declarations/define-app.ts");
      const kinds = real.kinds.map((k) =>
        k.name === "tenant-echo"
          ? ({
              ...k,
              flow: [
                { name: "a", key, concurrency: 2 },
                { name: "a", key: user, concurrency: 1 },
              ],
            } as Kind)
          : k,
      );
      expect(() => defineApp({ ...app, kinds } as never)).toThrow(/flow\[1\]\.name "a" is also flow\[0\]'s/);
    });
  });
});
