import type { JobStatus } from "../job/status.ts";
import type { Condition } from "./expression.ts";

/** Named condition fragments. Each store operation composes its ConditionExpression from these. */

export const attributeMissing =
  (attr: string): Condition =>
  (e) =>
    `attribute_not_exists(${e.name(attr)})`;

export const itemMissing: Condition = attributeMissing("pk");

export const statusIs =
  (status: JobStatus): Condition =>
  (e) =>
    `${e.name("status")} = ${e.value(status)}`;

export const statusIn =
  (...statuses: JobStatus[]): Condition =>
  (e) =>
    `${e.name("status")} IN (${statuses.map((s) => e.value(s)).join(", ")})`;

/** The job's runAt has come. */
export const isDue =
  (now: number): Condition =>
  (e) =>
    `${e.name("runAt")} <= ${e.value(now)}`;

/** The previous owner stopped heartbeating: its lease may be taken over. */
export const leaseExpired =
  (now: number): Condition =>
  (e) =>
    `${e.name("leaseUntil")} < ${e.value(now)}`;

/** The caller still owns the run: the fence every post-claim write carries. */
export const leaseHeldBy =
  (token: string): Condition =>
  (e) =>
    `${e.name("leaseToken")} = ${e.value(token)}`;

export const cancelNotRequested: Condition = attributeMissing("cancelRequested");

export const runAtIs =
  (runAt: number): Condition =>
  (e) =>
    `${e.name("runAt")} = ${e.value(runAt)}`;

export const attributeEquals =
  (attr: string, value: unknown): Condition =>
  (e) =>
    `${e.name(attr)} = ${e.value(value)}`;

export const attributeBefore =
  (attr: string, limit: number): Condition =>
  (e) =>
    `${e.name(attr)} < ${e.value(limit)}`;
