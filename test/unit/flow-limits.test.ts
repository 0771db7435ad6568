import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { ClientError } from "../../lib/errors.ts";
import { type CheckedRequest, checkEnqueueRequest, type RequestKind } from "../../lib/job/check-request.ts";
import { costFor, type FlowSettings, flowLimitNamed, flowLimitsOf, rateSlot } from "../../lib/job/flow.ts";
import { limitKeyOf, parkedLineOf } from "../../lib/job/flow-key.ts";

/**
 * Several flow limits on one kind (docs/guide/flow-control.md, "Several limits"): how they are named,
 * what a job's enqueue computes for each (its key, its cost on a rate), and each refusal, a 400
 * naming the kind and the limit's field.
 */
type Report = { tenant: string; user: string; tokens: number };
const tenant = (p: Report) => p.tenant;
const user = (p: Report) => p.user;
const shared = () => "llm";
const reportLimits: FlowSettings<Report>[] = [
  { name: "tenant", key: tenant, concurrency: 3 },
  { name: "user", key: user, concurrency: 1 },
  { name: "llm", key: shared, rate: { limit: 20_000, periodSeconds: 60, cost: (p) => p.tokens } },
];

const kindWith = (flow: RequestKind["flow"]): RequestKind => ({ name: "report", queue: "default", flow });
const check = (flow: RequestKind["flow"], payload: unknown) =>
  checkEnqueueRequest({ kind: "report", payload }, new Map([["report", kindWith(flow)]]), app.queues);
const accepted = (flow: RequestKind["flow"], payload: unknown): CheckedRequest<RequestKind> => {
  const answer = check(flow, payload);
  if (answer instanceof ClientError) throw answer;
  return answer;
};
const refused = (flow: RequestKind["flow"], payload: unknown) => {
  const answer = check(flow, payload);
  expect(answer).toBeInstanceOf(ClientError);
  const { code, message, issues } = answer as ClientError;
  return { code, message, issue: issues?.[0]?.message };
};
const job: Report = { tenant: "acme", user: "ann", tokens: 1200 };

describe("a kind's limits", () => {
  it("are a list, a lone limit being a list of one; each named by its own name or its position", () => {
    const unnamed = [
      { key: tenant, concurrency: 2 },
      { key: user, concurrency: 1 },
    ] as FlowSettings<never>[];
    expect(flowLimitsOf(unnamed).map((l) => [l.name, l.index])).toEqual([
      ["1", 0],
      ["2", 1],
    ]);
    expect(flowLimitsOf({ key: tenant, concurrency: 2 } as FlowSettings<never>).map((l) => l.name)).toEqual([
      "1",
    ]);
    expect(flowLimitsOf(reportLimits as FlowSettings<never>[]).map((l) => l.name)).toEqual([
      "tenant",
      "user",
      "llm",
    ]);
    expect(flowLimitNamed(reportLimits as FlowSettings<never>[], undefined)?.name).toBe("tenant");
    expect(flowLimitNamed(reportLimits as FlowSettings<never>[], "llm")?.index).toBe(2);
    expect(flowLimitNamed(reportLimits as FlowSettings<never>[], "nope")).toBeUndefined();
  });

  it("a job's enqueue computes its key under each limit and its cost on each rate with one", () => {
    const checked = accepted(reportLimits as FlowSettings<never>[], job);
    expect([checked.flowKey, checked.flowKeys, checked.flowCosts]).toEqual([
      "acme",
      { user: "ann", llm: "llm" },
      { llm: 1200 },
    ]);
    // A lone limit keeps the fields it always had: its key alone.
    const lone = accepted({ key: tenant, concurrency: 2 } as FlowSettings<never>, job);
    expect([lone.flowKey, lone.flowKeys, lone.flowCosts]).toEqual(["acme", undefined, undefined]);
  });

  it("a job's keys read back from its attributes, and its line is its first limit's unless parkedIn says", () => {
    const limits = flowLimitsOf(reportLimits as FlowSettings<never>[]);
    const attrs = { kind: "tenant-report", flowKey: "acme", flowKeys: { user: "ann", llm: "llm" } };
    expect(limits.map((l) => limitKeyOf(attrs, l))).toEqual([
      { kind: "tenant-report", key: "acme" },
      { kind: "tenant-report", key: "ann", limit: "user" },
      { kind: "tenant-report", key: "llm", limit: "llm" },
    ]);
    // A job enqueued before its kind declared a limit has no key under it: the limit doesn't hold it.
    expect(limitKeyOf({ kind: "tenant-report", flowKey: "acme" }, limits[1] as never)).toBeUndefined();
    expect(parkedLineOf(attrs)).toEqual({ kind: "tenant-report", key: "acme" });
    expect(parkedLineOf({ ...attrs, parkedIn: "user" })).toEqual({
      kind: "tenant-report",
      key: "ann",
      limit: "user",
    });
  });

  it("a rate's cost takes that many units: a start waits until the bucket holds them", () => {
    const rate = { limit: 10, periodSeconds: 10 }; // a unit a second, a burst of 10
    expect(rateSlot(undefined, 0, rate, 4)).toBe(0);
    // 8 units already reserved ahead of now (tat 8 s): 4 more fit once tat + 4 − 10 ≤ t, at 2 s.
    expect(rateSlot(8_000, 0, rate, 4)).toBe(2_000);
    expect(rateSlot(8_000, 0, rate, 1)).toBe(0);
    expect(costFor({ ...rate }, job)).toBe(1);
  });
});

describe("a job's costs and keys refused at enqueue, naming the kind and the field", () => {
  const rate = (cost: (p: Report) => number) => [
    { name: "tenant", key: tenant, concurrency: 3 },
    { name: "llm", key: shared, rate: { limit: 20_000, periodSeconds: 60, cost } },
  ];
  it.each([
    [
      "throws",
      () => {
        throw new Error("no tokens field");
      },
      "its cost function threw: no tokens field",
    ],
    ["gives 0", () => 0, "its cost must be a whole number from 1 to the rate's limit 20000, got 0"],
    [
      "gives a fraction",
      () => 1.5,
      "its cost must be a whole number from 1 to the rate's limit 20000, got 1.5",
    ],
    [
      "gives more than the limit",
      () => 20_001,
      "its cost must be a whole number from 1 to the rate's limit 20000, got 20001",
    ],
    [
      "gives a string",
      () => "12" as unknown as number,
      "its cost must be a whole number from 1 to the rate's limit 20000, got 12",
    ],
  ])("a cost function that %s is a 400", (_, cost, issue) => {
    expect(refused(rate(cost) as FlowSettings<never>[], job)).toEqual({
      code: "validation_error",
      message: 'kind "report" gave the job no usable cost on its rate (flow[1].rate.cost)',
      issue,
    });
  });

  it("a cost at the limit is taken", () => {
    expect(accepted(rate(() => 20_000) as FlowSettings<never>[], job).flowCosts).toEqual({ llm: 20_000 });
  });

  it("a key function of a later limit that throws, or a key's concurrency that is unusable, names that limit", () => {
    const badKey = [
      { name: "tenant", key: tenant, concurrency: 3 },
      {
        name: "user",
        key: () => {
          throw new Error("no user");
        },
        concurrency: 1,
      },
    ];
    expect(refused(badKey as FlowSettings<never>[], job)).toEqual({
      code: "validation_error",
      message: 'kind "report" could not compute the job\'s flow key (flow[1].key)',
      issue: "its key function threw: no user",
    });
    const badConcurrency = [
      { name: "tenant", key: tenant, concurrency: 3 },
      { name: "user", key: user, concurrency: () => 0 },
    ];
    expect(refused(badConcurrency as FlowSettings<never>[], job)).toEqual({
      code: "validation_error",
      message: 'kind "report" gave flow key "ann" no usable concurrency (flow[1].concurrency)',
      issue: "its concurrency must be a whole number from 1 to 1000, got 0",
    });
  });
});
