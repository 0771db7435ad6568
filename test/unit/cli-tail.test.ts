import { describe, expect, it } from "vitest";
import { ChangeTracker, type JobChange, renderChange } from "../../cli/tail-changes.ts";
import type { JobView } from "../../client/vocabulary.ts";
import { NEW_ECHO_JOB } from "../support/jobs.ts";

const created = "2026-01-01T10:00:00.000Z";
const job = (id: string, patch: Partial<JobView> = {}): JobView => ({
  id,
  ...NEW_ECHO_JOB,
  payload: null,
  createdAt: created,
  runAt: created,
  ...patch,
});
/** What the tracker reports for a new job(): new → queued at `time`. */
const newJobChange = (id: string, time: string): JobChange => {
  const { kind, queue, attempts, maxAttempts } = NEW_ECHO_JOB;
  return { time, id, kind, queue, from: null, to: "queued", attempts, maxAttempts };
};
const at = (s: number) => new Date(Date.parse(created) + s * 1000);

describe("ChangeTracker: what tail prints between two looks at the jobs", () => {
  it("prints nothing for the first look: the jobs already there are its baseline", () => {
    const tracker = new ChangeTracker();
    expect(tracker.observe([job("A"), job("B", { status: "done" })], at(1))).toEqual([]);
    expect(tracker.size).toBe(2);
  });

  it("prints a new job, then each change of status, with the job's own time for it", () => {
    const tracker = new ChangeTracker();
    tracker.observe([], at(0));
    expect(tracker.observe([job("A")], at(1))).toEqual([newJobChange("A", created)]);
    expect(tracker.observe([job("A")], at(2))).toEqual([]);
    const started = "2026-01-01T10:00:02.500Z";
    expect(
      tracker.observe([job("A", { status: "running", attempts: 1, startedAt: started })], at(3)),
    ).toMatchObject([{ time: started, from: "queued", to: "running", attempts: 1 }]);
    const finished = "2026-01-01T10:00:03.100Z";
    expect(
      tracker.observe(
        [job("A", { status: "done", attempts: 1, startedAt: started, finishedAt: finished })],
        at(4),
      ),
    ).toMatchObject([{ time: finished, from: "running", to: "done" }]);
  });

  it("prints a retry seen only as a new attempt in the same status, with its error and the time it was seen", () => {
    const tracker = new ChangeTracker();
    tracker.observe([job("A", { attempts: 0 })], at(0));
    expect(tracker.observe([job("A", { attempts: 1, lastError: "boom" })], at(5))).toEqual([
      expect.objectContaining({
        time: at(5).toISOString(),
        from: "queued",
        to: "queued",
        attempts: 1,
        lastError: "boom",
      }),
    ]);
  });

  it("reports a job seen queued and then done as queued → done: its running fell between two looks", () => {
    const tracker = new ChangeTracker();
    tracker.observe([], at(0));
    tracker.observe([job("A")], at(1));
    const finished = "2026-01-01T10:00:01.700Z";
    expect(
      tracker.observe(
        [
          job("A", {
            status: "done",
            attempts: 1,
            startedAt: "2026-01-01T10:00:01.200Z",
            finishedAt: finished,
          }),
        ],
        at(2),
      ),
    ).toEqual([expect.objectContaining({ from: "queued", to: "done", attempts: 1, time: finished })]);
  });

  it("sees a job that came and finished between two looks as new → done", () => {
    const tracker = new ChangeTracker();
    tracker.observe([], at(0));
    expect(
      tracker.observe([job("A", { status: "done", finishedAt: "2026-01-01T10:00:00.900Z" })], at(1)),
    ).toMatchObject([{ from: null, to: "done", time: "2026-01-01T10:00:00.900Z" }]);
  });

  it("orders a look's changes by time, and forgets jobs that left the table", () => {
    const tracker = new ChangeTracker();
    tracker.observe([job("A"), job("B")], at(0));
    const changes = tracker.observe(
      [
        job("A", { status: "running", attempts: 1, startedAt: "2026-01-01T10:00:09.000Z" }),
        job("B", { status: "running", attempts: 1, startedAt: "2026-01-01T10:00:08.000Z" }),
      ],
      at(10),
    );
    expect(changes.map((c) => c.id)).toEqual(["B", "A"]);
    tracker.observe([job("B", { status: "running", attempts: 1 })], at(11));
    expect(tracker.size).toBe(1);
    // A job id seen again after it was forgotten counts as new.
    expect(tracker.observe([job("A", { status: "done" })], at(12))).toMatchObject([{ id: "A", from: null }]);
  });

  it("renders one line per change", () => {
    expect(
      renderChange({
        time: "2026-01-01T10:00:03.123Z",
        id: "01K",
        kind: "fail",
        queue: "default",
        from: "running",
        to: "queued",
        attempts: 1,
        maxAttempts: 3,
        lastError: "failed on purpose",
      }),
    ).toBe("10:00:03Z  01K  fail  default  running → queued  (attempt 1/3)  failed on purpose");
    expect(renderChange(newJobChange("01K", "2026-01-01T10:00:04.000Z"))).toBe(
      "10:00:04Z  01K  echo  default  new → queued  (attempt 0/3)",
    );
  });
});
