import { createHash } from "node:crypto";
import { describeIssues, ScheduleInput, ScheduleName, scheduleWrite } from "../cron/schedule.ts";
import type { ScheduleDeclaration } from "../declarations/schedule-declaration.ts";
import { ConfigError, issuesOf } from "../errors.ts";
import type { Log } from "../observability/log.ts";
import type { StoreContext } from "../store/context.ts";
import { deleteSchedule, listSchedules, putSchedule } from "../store/schedule-ops.ts";

/** JSON with object keys sorted, so a hash doesn't change when a declaration's keys are reordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Parses a declaration (defaults filled in, so spelling out a default doesn't change the hash). */
export function parseDeclaration(declaration: ScheduleDeclaration): {
  name: string;
  input: ScheduleInput;
  hash: string;
} {
  const { name, ...raw } = declaration;
  const validName = ScheduleName.safeParse(name);
  const parsed = ScheduleInput.safeParse(raw);
  if (!validName.success || !parsed.success) {
    const problems = [
      ...(validName.success ? [] : validName.error.issues.map((i) => i.message)),
      ...(parsed.success ? [] : [describeIssues(issuesOf(parsed.error))]),
    ];
    throw new ConfigError(`declared schedule "${name}" is invalid: ${problems.join("; ")}`);
  }
  const input = parsed.data;
  const hash = createHash("sha256")
    .update(canonicalJson({ name, ...input }))
    .digest("hex")
    .slice(0, 32);
  return { name, input, hash };
}

export interface SyncReport {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  /** Declared names already taken by an API schedule, which a sync never touches. */
  skipped: number;
}

/**
 * Brings the table in line with the declarations: a code schedule is written only when its
 * declaration's hash differs from the stored one (so API edits survive until the code changes);
 * code schedules no longer declared are deleted; API schedules are never touched.
 * A created or re-timed schedule's first fire is the first one after `now`.
 */
export async function syncDeclaredSchedules(
  ctx: StoreContext,
  declared: readonly ScheduleDeclaration[],
  now: number = ctx.clock.now(),
  log?: Log,
): Promise<SyncReport> {
  const parsed = declared.map(parseDeclaration);
  const names = new Set(parsed.map((p) => p.name));
  if (names.size !== parsed.length) throw new ConfigError("a schedule name is declared twice");
  const stored = new Map((await listSchedules(ctx)).map((s) => [s.name, s]));
  const report: SyncReport = { created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0 };

  for (const { name, input, hash } of parsed) {
    const current = stored.get(name);
    if (current?.source === "api") {
      log?.warn("declared schedule name is taken by an API schedule; left alone", { schedule: name });
      report.skipped += 1;
      continue;
    }
    if (current?.declaredHash === hash) {
      report.unchanged += 1;
      continue;
    }
    const { created } = await putSchedule(
      ctx,
      name,
      scheduleWrite(input, now),
      { source: "code", declaredHash: hash },
      now,
    );
    report[created ? "created" : "updated"] += 1;
  }
  for (const s of stored.values()) {
    if (s.source !== "code" || names.has(s.name)) continue;
    // A lost race means someone deleted it first or it became an API schedule: either way not ours.
    const result = await deleteSchedule(ctx, s.name, "code");
    if (result.deleted) report.deleted += 1;
  }
  log?.info("declared schedules synced", { ...report, at: new Date(now).toISOString() });
  return report;
}
