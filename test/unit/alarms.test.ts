import { afterEach, describe, expect, test, vi } from "vitest";
import { type AlarmSpec, buildAlarms, defaultAlarmThresholds } from "../../lib/deploy-plan/alarms.ts";
import type { QueueResources } from "../../lib/deploy-plan/queue-resources.ts";
import { pascalCase } from "../../lib/deploy-plan/resource-names.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../../lib/limits.ts";
import { countMetrics, METRICS_NAMESPACE, METRICS_SERVICE } from "../../lib/observability/metric-names.ts";
import { EmfMetrics } from "../../lib/observability/metrics.ts";
import { queueResources } from "../support/queue-resources.ts";

const queues = queueResources("default", "my-queue");
const alarms = buildAlarms(queues);
const ofQueue = (name: string) => alarms.filter((a) => a.id.startsWith(pascalCase(name)));

/** The dimension-name sets EmfMetrics really writes, read back from the EMF lines of one flush. */
function publishedDimensionSets(): string[][] {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(...String(chunk).split("\n").filter(Boolean));
    return true;
  };
  // Powertools writes through its own Console on process.stdout, or through console under POWERTOOLS_DEV.
  vi.spyOn(process.stdout, "write").mockImplementation(capture);
  vi.spyOn(console, "log").mockImplementation(capture);
  const metrics = new EmfMetrics();
  metrics.count("dead", "default", "echo");
  metrics.flush();
  vi.restoreAllMocks();

  const sets: string[][] = [];
  for (const line of lines) {
    const emf = JSON.parse(line) as {
      _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
      [k: string]: unknown;
    };
    for (const directive of emf._aws?.CloudWatchMetrics ?? []) {
      expect(directive.Namespace).toBe(METRICS_NAMESPACE);
      for (const set of directive.Dimensions) {
        for (const dim of set) expect(emf[dim], `EMF line carries a value for ${dim}`).toBeDefined();
        sets.push([...set].sort());
      }
    }
  }
  return sets;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("alarms", () => {
  test("ids are unique and PascalCase, derived from the queue name", () => {
    const ids = alarms.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    expect(ids).toContain("DefaultDlqNotEmpty");
    expect(ids.filter((id) => id.startsWith("MyQueue")).length).toBe(7);
  });

  test("six alarms per Lambda queue, five per pool queue", () => {
    expect(ofQueue("default").length).toBe(7);
    expect(ofQueue("my-queue").length).toBe(7);
    expect(ofQueue("heavy").length).toBe(6);
    expect(ofQueue("heavy").some((a) => a.namespace === "AWS/Lambda")).toBe(false);
    expect(alarms.length).toBe(20);
  });

  test("each main queue alarms at 10 days of message age, four days before SQS's 14-day retention drops it", () => {
    expect(QUEUE_MESSAGE_RETENTION_SECONDS).toBe(14 * 86_400);
    for (const q of queues) {
      const near = ofQueue(q.name).find((a) => a.id === `${pascalCase(q.name)}NearRetention`);
      expect(near).toMatchObject({
        namespace: "AWS/SQS",
        metricName: "ApproximateAgeOfOldestMessage",
        dimensions: { QueueName: q.sqsName },
        statistic: "Maximum",
        threshold: 10 * 86_400,
        comparisonOperator: "GreaterThanThreshold",
      });
      expect(Object.keys(near?.dimensions ?? {})).toEqual(["QueueName"]);
      expect(near?.threshold).toBeLessThan(QUEUE_MESSAGE_RETENTION_SECONDS);
      // The main queue only: a DLQ message is drained by the reaper within a minute.
      expect(near?.dimensions.QueueName).not.toBe(q.dlqSqsName);
    }
    const custom = buildAlarms(queues, { nearRetentionAgeSeconds: 7 * 86_400 });
    expect(
      custom.filter((a) => a.id.endsWith("NearRetention")).every((a) => a.threshold === 7 * 86_400),
    ).toBe(true);
    expect(custom.find((a) => a.id.endsWith("OldestMessageAge"))?.threshold).toBe(
      defaultAlarmThresholds.oldestMessageAgeSeconds,
    );
  });

  test("skyforge alarms name a real counter and a dimension set EmfMetrics really publishes", () => {
    const published = publishedDimensionSets();
    expect(published).toContainEqual(["kind", "queue", "service"]);
    expect(published).toContainEqual(["queue", "service"]);
    const emf = alarms.filter((a) => a.namespace === METRICS_NAMESPACE);
    // Per queue: dead jobs, paused jobs and failed cron fires.
    expect(emf.length).toBe(3 * queues.length);
    for (const q of queues) {
      // Any paused job waits for a person (onExhausted "pause", docs/architecture.md §21).
      expect(ofQueue(q.name).find((a) => a.id === `${pascalCase(q.name)}PausedJobs`)).toMatchObject({
        metricName: "paused",
        dimensions: { service: METRICS_SERVICE, queue: q.name },
        statistic: "Sum",
        threshold: 0,
        comparisonOperator: "GreaterThanThreshold",
      });
    }
    for (const q of queues) {
      expect(ofQueue(q.name).find((a) => a.id === `${pascalCase(q.name)}CronFailed`)).toMatchObject({
        metricName: "cronFailed",
        statistic: "Sum",
        threshold: 0,
        comparisonOperator: "GreaterThanThreshold",
      });
    }
    for (const a of emf) {
      expect(countMetrics as readonly string[]).toContain(a.metricName);
      expect(published).toContainEqual(Object.keys(a.dimensions).sort());
      expect(a.dimensions.service).toBe(METRICS_SERVICE);
    }
    for (const q of queues) {
      const dead = ofQueue(q.name).find((a) => a.namespace === METRICS_NAMESPACE);
      expect(dead?.metricName).toBe("dead");
      expect(dead?.dimensions.queue).toBe(q.name);
      expect(dead?.statistic).toBe("Sum");
      expect(dead?.period).toBe(300);
    }
  });

  test("AWS alarms use the real metric and dimension names and the given physical names", () => {
    /** Queue `q`'s alarm on `metricName` matches `expected`, and has only the dimensions it names. */
    const expectAlarm = (
      q: string,
      metricName: string,
      expected: Omit<Partial<AlarmSpec>, "dimensions"> & { dimensions: Record<string, string | undefined> },
    ) => {
      const alarm = ofQueue(q).find((a) => a.metricName === metricName);
      expect(alarm).toMatchObject(expected);
      expect(Object.keys(alarm?.dimensions ?? {})).toEqual(Object.keys(expected.dimensions));
    };
    for (const q of queues) {
      expectAlarm(q.name, "ApproximateNumberOfMessagesVisible", {
        namespace: "AWS/SQS",
        dimensions: { QueueName: q.dlqSqsName },
        statistic: "Maximum",
        threshold: 0,
        comparisonOperator: "GreaterThanThreshold",
      });
      expectAlarm(q.name, "ApproximateAgeOfOldestMessage", {
        namespace: "AWS/SQS",
        dimensions: { QueueName: q.sqsName },
      });
    }
    for (const q of queues.filter((x) => x.tier === "lambda")) {
      expectAlarm(q.name, "Errors", {
        namespace: "AWS/Lambda",
        dimensions: { FunctionName: q.workerFunctionName },
        statistic: "Sum",
        threshold: 0,
      });
    }
  });

  test("thresholds default, and override one at a time", () => {
    const threshold = (list: AlarmSpec[], metricName: string) =>
      list.find((a) => a.metricName === metricName)?.threshold;
    expect(threshold(alarms, "ApproximateAgeOfOldestMessage")).toBe(
      defaultAlarmThresholds.oldestMessageAgeSeconds,
    );
    expect(threshold(alarms, "dead")).toBe(defaultAlarmThresholds.deadJobsPerFiveMinutes);

    const custom = buildAlarms(queues, { oldestMessageAgeSeconds: 600 });
    expect(threshold(custom, "ApproximateAgeOfOldestMessage")).toBe(600);
    expect(threshold(custom, "dead")).toBe(defaultAlarmThresholds.deadJobsPerFiveMinutes);
    const dead = buildAlarms(queues, { deadJobsPerFiveMinutes: 10 });
    expect(dead.filter((a) => a.metricName === "dead").every((a) => a.threshold === 10)).toBe(true);
    expect(threshold(dead, "ApproximateAgeOfOldestMessage")).toBe(
      defaultAlarmThresholds.oldestMessageAgeSeconds,
    );
  });

  test("missing data never alarms, and every alarm is a well-formed spec", () => {
    for (const a of alarms) {
      expect(a.treatMissingData).toBe("notBreaching");
      expect(a.description.length).toBeGreaterThan(0);
      expect(a.period % 60).toBe(0);
      expect(a.evaluationPeriods).toBeGreaterThanOrEqual(1);
    }
  });

  test("physical names of any type are placed untouched", () => {
    const o = (out: string) => ({ out });
    const q = {
      name: "default",
      tier: "lambda" as const,
      sqsName: o("q"),
      dlqSqsName: o("d"),
      workerFunctionName: o("f"),
    };
    const built = buildAlarms([q]);
    const values = built.flatMap((a) => Object.values(a.dimensions));
    for (const n of [q.sqsName, q.dlqSqsName, q.workerFunctionName]) expect(values).toContain(n);
    expect(q.sqsName).toEqual({ out: "q" });
  });

  test("queue names that fold to one id are refused", () => {
    const twin = (name: string): QueueResources => ({
      name,
      tier: "pool",
      sqsName: name,
      dlqSqsName: `${name}-dlq`,
    });
    expect(() => buildAlarms([twin("a-b"), twin("a_b")])).toThrow(/AB/);
    expect(pascalCase("my-queue")).toBe("MyQueue");
    expect(pascalCase("2fast")).toBe("Q2fast");
  });
});
