import { CloudWatchClient, DescribeAlarmsCommand } from "@aws-sdk/client-cloudwatch";
import { mockClient } from "aws-sdk-client-mock";
import { describe, expect, it } from "vitest";
import { DEFAULT_KEY_LAG, type DoctorInput, findProblems, laggingKeys } from "../../cli/doctor-findings.ts";
import { stageAlarmsInAlarm } from "../../cli/stage-alarms.ts";
import { NonDeterminismError } from "../../lib/durable-errors.ts";

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

  it("names a paused queue that holds jobs at once, by SQS's counts or its listed jobs, instead of as overdue later", () => {
    const batch = (counts: { dlq: number; visible?: number; delayed?: number }) => ({
      ...clean,
      queues: [{ name: "batch", paused: true, counts, eventSource: { enabled: false, state: "Disabled" } }],
    });
    expect(findProblems(batch({ dlq: 0, visible: 0, delayed: 0 }))).toEqual([]);
    const bySqs = findProblems(batch({ dlq: 0, visible: 2, delayed: 1 }));
    expect(bySqs.map((f) => [f.check, f.subject])).toEqual([["paused-queue", "batch"]]);
    expect(bySqs[0]?.message).toBe(
      "queue batch is paused with 3 job(s) waiting: none of them runs until it is resumed",
    );
    expect(bySqs[0]?.fix).toMatch(/^npx skyforge queues resume batch /);
    // Long overdue: still one finding, the one that names the cause.
    const listed = findProblems({
      ...batch({ dlq: 0 }),
      oldestQueued: [{ id: "old", kind: "batch-echo", queue: "batch", runAt: at(3600) }],
      queuedCounts: { batch: 4 },
    });
    expect(listed.map((f) => [f.check, f.subject])).toEqual([["paused-queue", "batch"]]);
    expect(listed[0]?.message).toMatch(/paused with 4 job\(s\) waiting/);
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

describe("doctor's lagging keys: far longer than the median of their peers", () => {
  const key = (queue: string, key: string, waitedSeconds: number, waiting = 3) => ({
    queue,
    kind: "tenant-echo",
    key,
    waiting,
    oldestWaitingSince: at(waitedSeconds),
  });

  it("names a key whose oldest job waited ≥ 5 × the median of its queue's other busy keys and ≥ 5 min", () => {
    const keys = [
      key("default", "acme", 1800),
      key("default", "globex", 60),
      key("default", "initech", 90),
      key("default", "umbrella", 120),
      // Another queue: compared with its own keys only.
      key("other", "solo", 7200),
    ];
    const findings = findProblems({ ...clean, keys });
    expect(findings.map((f) => [f.check, f.subject])).toEqual([["lagging-key", "tenant-echo/acme"]]);
    expect(findings[0]?.message).toBe(
      "flow key acme of tenant-echo on default has a job waiting 1800 s, the median of its 3 busiest peer key(s) 90 s; 3 job(s) waiting",
    );
    expect(findings[0]?.fix).toContain("GET /keys/tenant-echo/acme");
  });

  it("the thresholds: under five minutes, under the factor, or with no peer, nothing is named", () => {
    const lag = DEFAULT_KEY_LAG;
    // Far ahead of its peers, but only four minutes.
    expect(laggingKeys([key("q", "a", 240), key("q", "b", 10)], NOW, lag)).toEqual([]);
    // Ten minutes, but its peers wait about as long (under 5 ×).
    expect(laggingKeys([key("q", "a", 600), key("q", "b", 200), key("q", "c", 150)], NOW, lag)).toEqual([]);
    // Alone on its queue: no peers to compare with (the overdue check covers a queue that stalls).
    expect(laggingKeys([key("q", "a", 9000)], NOW, lag)).toEqual([]);
    // Its line emptied, or the API gave no time: not compared.
    expect(laggingKeys([key("q", "a", 9000, 0), key("q", "b", 1)], NOW, lag)).toEqual([]);
    // A lower bar from the command line names it.
    expect(
      laggingKeys([key("q", "a", 240), key("q", "b", 10)], NOW, { factor: 2, minMs: 60_000 }).map(
        (f) => f.subject,
      ),
    ).toEqual(["tenant-echo/a"]);
  });
});

describe("doctor's alarms on a stage", () => {
  it("names a durable job paused by a NonDeterminismError, not one paused as its attempts ran out", () => {
    const diverged = new NonDeterminismError("j1", "b", "was recorded as a sleep, and is now met as a step");
    const findings = findProblems({
      ...clean,
      paused: [
        { id: "j1", kind: "onboard", queue: "default", runAt: at(60), lastError: diverged.message },
        { id: "j2", kind: "echo", queue: "default", runAt: at(60), lastError: "boom" },
      ],
    });
    expect(findings).toEqual([
      {
        check: "nondeterministic-job",
        subject: "j1",
        message: `durable job j1 (onboard) is paused: ${diverged.message}`,
        fix: expect.stringContaining("npx skyforge jobs resume j1"),
      },
    ]);
  });

  it("each alarm in ALARM is a finding; none given (a local stack) checks nothing", () => {
    expect(findProblems({ ...clean, alarms: [] })).toEqual([]);
    const findings = findProblems({
      ...clean,
      alarms: [{ name: "skyforge-prod-DefaultDlqNotEmpty", reason: "Threshold Crossed", since: at(300) }],
    });
    expect(findings.map((f) => [f.check, f.subject])).toEqual([
      ["alarm", "skyforge-prod-DefaultDlqNotEmpty"],
    ]);
    expect(findings[0]?.message).toBe(
      `alarm skyforge-prod-DefaultDlqNotEmpty is in ALARM since ${at(300)}: Threshold Crossed`,
    );
  });

  it("reads the stage's alarms by their name prefix in state ALARM, page by page (DescribeAlarms)", async () => {
    const cw = mockClient(CloudWatchClient);
    cw.on(DescribeAlarmsCommand)
      .resolvesOnce({
        MetricAlarms: [
          { AlarmName: "skyforge-prod-A", StateReason: "r", StateUpdatedTimestamp: new Date(NOW) },
        ],
        NextToken: "more",
      })
      .resolvesOnce({ CompositeAlarms: [{ AlarmName: "skyforge-prod-B" }] });
    const alarms = await stageAlarmsInAlarm(new CloudWatchClient({ region: "eu-west-1" }), "prod");
    expect(alarms).toEqual([
      { name: "skyforge-prod-A", reason: "r", since: new Date(NOW).toISOString() },
      { name: "skyforge-prod-B" },
    ]);
    const calls = cw.commandCalls(DescribeAlarmsCommand).map((c) => c.args[0].input);
    expect(calls).toMatchObject([
      { AlarmNamePrefix: "skyforge-prod-", StateValue: "ALARM" },
      { AlarmNamePrefix: "skyforge-prod-", StateValue: "ALARM", NextToken: "more" },
    ]);
    cw.restore();
  });
});
