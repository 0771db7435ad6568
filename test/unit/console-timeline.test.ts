import { describe, expect, it } from "vitest";

/** One line of the timeline, as console/timeline.js builds it. */
interface Entry {
  at: string;
  what: string;
  title: string;
  detail?: string;
  tone?: string;
  ms?: number;
}

// A browser file, type-checked under console/tsconfig.json: loaded by its path, typed here by what the test reads.
const TIMELINE = "../../console/timeline.js";
const FORMAT = "../../console/format.js";
const { groupsOf, timelineOf } = (await import(TIMELINE)) as {
  timelineOf(job: object, more?: object): Entry[];
  groupsOf(job: object): string[];
};
const { attemptsText, waitingForKeyText } = (await import(FORMAT)) as {
  attemptsText(job: object): string;
  waitingForKeyText(job: object): string | undefined;
};

const base = {
  id: "01J",
  kind: "flaky",
  queue: "default",
  status: "done",
  attempts: 2,
  maxAttempts: 3,
  createdAt: "2026-01-01T00:00:00.000Z",
  runAt: "2026-01-01T00:00:05.000Z",
  startedAt: "2026-01-01T00:00:09.000Z",
  finishedAt: "2026-01-01T00:00:10.000Z",
};

describe("a job's timeline from its own records (console/timeline.js)", () => {
  it("enqueued, due after its delay, each attempt of its history (lapsed, then done), finished", () => {
    const entries = timelineOf({
      ...base,
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      history: [
        {
          attempt: 1,
          startedAt: "2026-01-01T00:00:05.000Z",
          endedAt: "2026-01-01T00:00:08.000Z",
          outcome: "lapsed",
          error: "lease lapsed after 3 s without an end",
          runner: "local:1",
        },
        {
          attempt: 2,
          startedAt: "2026-01-01T00:00:09.000Z",
          endedAt: "2026-01-01T00:00:10.000Z",
          outcome: "done",
        },
      ],
    });
    expect(entries.map((e) => [e.what, e.title, e.tone])).toEqual([
      ["enqueued", "enqueued", undefined],
      ["due", "due", "wait"],
      ["attempt", "attempt 1: lapsed", "bad"],
      ["attempt", "attempt 2: done", "ok"],
      ["finished", "done", "ok"],
    ]);
    expect(entries[0]?.detail).toBe("trace 4bf92f3577b34da6a3ce929d0e0e4736");
    expect(entries[1]?.ms).toBe(5_000);
    expect(entries[2]?.detail).toBe("lease lapsed after 3 s without an end · on local:1");
  });

  it("without a history, the last attempt from its timings; steps, a wait and groups when given", () => {
    const job = {
      ...base,
      status: "scheduled",
      finishedAt: undefined,
      completes: "01G",
      childGroups: ["01H"],
      waiting: { for: "token" as const, until: "2026-01-01T01:00:00.000Z" },
    };
    expect(groupsOf(job)).toEqual(["01G", "01H"]);
    const entries = timelineOf(job, {
      steps: [{ name: "charge", type: "step", status: "done", attempt: 1, at: "2026-01-01T00:00:09.500Z" }],
      groups: [
        {
          id: "01G",
          status: "succeeded",
          createdAt: "2025-12-31T23:59:00.000Z",
          counts: { total: 3, pending: 0, done: 2, dead: 1, cancelled: 0 },
        },
      ],
    });
    expect(entries.map((e) => e.title)).toEqual([
      "completes group 01G: succeeded",
      "enqueued",
      "due",
      "attempt 2",
      "step charge: done",
      "waiting for token",
    ]);
    expect(entries[0]?.detail).toBe("3 children: 2 done, 1 dead, 0 cancelled, 0 pending");
  });

  it("a durable job's runs that waited gave their attempt back: the timeline and the count say the same", () => {
    const suspended = (start: string, end: string) => ({
      attempt: 1,
      startedAt: `2026-01-01T00:00:${start}.000Z`,
      endedAt: `2026-01-01T00:00:${end}.000Z`,
      outcome: "suspend",
    });
    const job = {
      ...base,
      kind: "onboard",
      status: "scheduled",
      attempts: 0,
      finishedAt: undefined,
      history: [suspended("06", "07"), suspended("08", "09")],
      waiting: { for: "token" as const, until: "2026-01-01T01:00:00.000Z" },
    };
    const runs = timelineOf(job).filter((e) => e.what === "attempt");
    expect(runs.map((e) => [e.title, e.tone])).toEqual([
      ["suspend: attempt given back", "wait"],
      ["suspend: attempt given back", "wait"],
    ]);
    expect(attemptsText(job)).toBe("0 / 3 · 2 runs gave their attempt back");
    // A run that counted, after one that didn't (the API's history ends with the current run's own):
    // one attempt, one run given back.
    const done = { ...suspended("09", "10"), outcome: "done" };
    const after = {
      ...job,
      status: "done",
      attempts: 1,
      history: [suspended("06", "07"), done],
      startedAt: "2026-01-01T00:00:09.000Z",
      finishedAt: "2026-01-01T00:00:10.000Z",
    };
    expect(
      timelineOf(after)
        .filter((e) => e.what === "attempt")
        .map((e) => e.title),
    ).toEqual(["suspend: attempt given back", "attempt 1: done"]);
    expect(attemptsText(after)).toBe("1 / 3 · 1 run gave its attempt back");
    expect(attemptsText(base)).toBe("2 / 3");
  });

  it("a parked job says which key it waits for", () => {
    expect(waitingForKeyText({ ...base, status: "queued", waitingForKey: true, flowKey: "acme" })).toBe(
      "waiting for key acme",
    );
    expect(waitingForKeyText({ ...base, status: "queued", flowKey: "acme" })).toBeUndefined();
    // In a later limit's line: that limit's key, named.
    const inUserLine = { waitingForKey: true, flowKey: "acme", flowKeys: { user: "ann" }, waitingIn: "user" };
    expect(waitingForKeyText({ ...base, status: "queued", ...inUserLine })).toBe(
      "waiting for key ann (limit user)",
    );
  });
});
