import { describe, expect, it } from "vitest";
import { type DoctorInput, findProblems } from "../../cli/doctor-findings.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString();

const clean: DoctorInput = {
  queues: [
    {
      name: "default",
      paused: false,
      counts: { dlq: 0 },
      eventSource: { enabled: true, state: "Enabled", reportsBatchItemFailures: true },
      visibilityTimeoutSeconds: 911,
      declared: { visibilityTimeoutSeconds: 911 },
    },
    // Paused: its event source is off on purpose.
    { name: "batch", paused: true, counts: { dlq: 0 }, eventSource: { enabled: false, state: "Disabled" } },
    // A pool queue has no event source.
    { name: "heavy", paused: false, counts: { dlq: 0 } },
  ],
  schedules: [
    { name: "nightly", enabled: true, lastRunAt: at(60), lastError: "old", lastErrorAt: at(3600) },
    { name: "off", enabled: false, lastError: "broken", lastErrorAt: at(10) },
  ],
  running: [{ id: "fresh", kind: "echo", queue: "default", runAt: at(100), leaseUntil: at(-30) }],
  oldestQueued: [{ id: "recent", kind: "echo", queue: "default", runAt: at(60) }],
  now: NOW,
  stuckAfterMs: 60_000,
  overdueAfterMs: 900_000,
};

describe("doctor's findings", () => {
  it("finds nothing on a healthy picture: a paused queue's source off, an old error since fixed, a disabled schedule", () => {
    expect(findProblems(clean)).toEqual([]);
  });

  it("names each problem once, with its check, subject and what to do, and honours the thresholds", () => {
    const findings = findProblems({
      ...clean,
      queues: [
        {
          name: "default",
          paused: false,
          counts: { dlq: 3 },
          eventSource: { enabled: false, state: "Disabled", reportsBatchItemFailures: false },
          visibilityTimeoutSeconds: 30,
          declared: { visibilityTimeoutSeconds: 911 },
        },
      ],
      schedules: [
        { name: "nightly", enabled: true, lastRunAt: at(3600), lastError: "kind gone", lastErrorAt: at(60) },
      ],
      running: [
        { id: "stuck", kind: "echo", queue: "default", runAt: at(600), leaseUntil: at(120) },
        // 30 s past its lease: under the 60 s threshold, not stuck yet.
        { id: "late", kind: "echo", queue: "default", runAt: at(600), leaseUntil: at(30) },
      ],
      oldestQueued: [{ id: "waiting", kind: "echo", queue: "default", runAt: at(1000) }],
    });
    expect(findings.map((f) => [f.check, f.subject])).toEqual([
      ["stuck-run", "stuck"],
      ["event-source-off", "default"],
      ["partial-batch-off", "default"],
      ["visibility-short", "default"],
      ["dead-letters", "default"],
      ["overdue-queue", "default"],
      ["failing-schedule", "nightly"],
    ]);
    expect(findings[0]?.message).toBe(
      "job stuck (echo on default) is running 120 s past its lease with no heartbeat: its worker died or froze",
    );
    expect(findings[3]?.message).toMatch(/^queue default's SQS visibility timeout is 30 s, below the 911 s/);
    expect(findings[5]?.message).toMatch(/has waited 1000 s past its due time$/);
    expect(findings[6]?.message).toBe(`schedule nightly failed at ${at(60)}: kind gone`);
    for (const f of findings) expect(f.fix).not.toBe("");
  });
});
