import { expect } from "vitest";
import type { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { JobItem } from "../../lib/store/job-item.ts";

/** The crash tests' lease: short, so a takeover is due within seconds. */
export const CRASH_LEASE_SECONDS = 3;
/** What the issue asks of any consumer's death: its jobs taken over within two leases. */
export const TAKEOVER_BOUND_MS = 2 * CRASH_LEASE_SECONDS * 1000;

/** From the crash to the run that took the job over. */
export const takeoverMs = (job: JobItem, crashedAt: number) => (job.startedAt ?? Number.NaN) - crashedAt;

/** The claimed job of a dead consumer was taken over in time by one other run, and finished once. */
export async function expectTakenOverOnce(
  done: JobItem,
  crashedAt: number,
  metrics: MemoryMetrics,
  annotate: (note: string) => Promise<unknown>,
): Promise<void> {
  const after = takeoverMs(done, crashedAt);
  await annotate(`taken over ${after} ms after the crash (lease ${CRASH_LEASE_SECONDS} s)`);
  expect(done).toMatchObject({ attempts: 2, claimedFrom: "running" });
  expect(after).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
  expect(metrics.total("revived")).toBe(1);
  expect(metrics.total("succeeded")).toBe(1);
}
