import { createHash } from "node:crypto";
import pLimit from "p-limit";
import { ulid } from "ulid";
import type * as z from "zod";
import { ClientError, type ClientIssue, issuesOf, TransientError } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import {
  AddChildrenRequest,
  CreateGroupRequest,
  DEFAULT_GROUP_EXPIRY_SECONDS,
  type GroupView,
  type ParsedGroupRequest,
} from "../job/group-schemas.ts";
import type { AnyKind } from "../job/kind.ts";
import { laneGuarantees } from "../job/lanes.ts";
import { traceOfSpan, withSpan } from "../observability/tracing.ts";
import { kindsReadyFor, validateEnqueue } from "../producer/validate.ts";
import { retentionExpiry } from "../retention.ts";
import type { CheckedEnqueue } from "../services/engine-services.ts";
import { type GroupItem, type Member, SLICE_SIZE, sliceCount } from "../store/group-item.ts";
import { allocateSlices, putGroup, sealGroup } from "../store/group-ops.ts";
import { getGroup } from "../store/group-read-ops.ts";
import { groupIndexKeys, groupKey, sliceKey } from "../store/keys.ts";
import { putSlice } from "../store/slice-ops.ts";
import { GROUP_STALL_MS, type GroupDeps, SLICE_RETENTION_DAYS } from "./group-deps.ts";
import { childJobId, completionJobId } from "./group-ids.ts";
import { tryComplete } from "./group-progress.ts";
import { countChildren, toGroupView } from "./group-view.ts";

/** The job whose handler creates a group (`ctx.group`): the group's id comes from it. */
export interface GroupOrigin {
  groupId: string;
  parentJobId: string;
  /** The parent's own membership, when the parent handed it to this group. */
  member?: Member;
}

/**
 * Creates a group (createGroup) in a `skyforge.group` span under `trace` (the caller's W3C context:
 * a traceparent header, or the run of the job whose handler makes it); the group keeps the span's
 * context, so its children and its completion job are spans of the same trace.
 */
export function createGroupTraced(
  deps: GroupDeps,
  raw: unknown,
  origin?: GroupOrigin,
  trace?: string,
): Promise<CreatedGroup> {
  const attributes = origin ? { "skyforge.job.id": origin.parentJobId } : {};
  return withSpan(
    "skyforge.group",
    attributes,
    async (span) => {
      const created = await createGroup(deps, raw, origin, traceOfSpan(span) ?? trace);
      span.setAttribute("skyforge.group.id", created.group.id);
      return created;
    },
    trace,
  );
}

export interface CreatedGroup {
  group: GroupView;
  /** false: the group existed already, created by this same request (a retry), and was resumed. */
  created: boolean;
}

function parse<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new ClientError("validation_error", `the ${what} is invalid`, issuesOf(parsed.error));
  return parsed.data;
}

/**
 * Every child and the completion job checked against the app before anything is written: one bad
 * child fails the whole request, each problem named by its path (`children.3.payload.url`).
 */
function checkChildren(deps: GroupDeps, children: readonly unknown[]): CheckedEnqueue[] {
  const issues: ClientIssue[] = [];
  const checked: CheckedEnqueue[] = [];
  children.forEach((raw, i) => {
    try {
      const valid = validateEnqueue(raw, deps.registry, deps.queues);
      refuseUnrecordedLane(valid.kind);
      if (valid.request.uniqueKey !== undefined) {
        throw new ClientError("validation_error", "a group's children carry no uniqueKey", [
          {
            path: "uniqueKey",
            message: "a group dedupes its own children: retry the create with the same id",
          },
        ]);
      }
      checked.push({ valid });
    } catch (err) {
      if (!(err instanceof ClientError)) throw err;
      const own = err.issues?.length ? err.issues : [{ path: "(root)", message: err.message }];
      for (const issue of own) {
        issues.push({
          path: `children.${i}${issue.path === "(root)" ? "" : `.${issue.path}`}`,
          message: issue.path === "(root)" ? err.message : issue.message,
        });
      }
    }
  });
  if (issues.length > 0) {
    throw new ClientError("validation_error", "some children are invalid; nothing was written", issues);
  }
  return checked;
}

/**
 * A group hears of a job's end from its record; fire-and-forget keeps none of a success. A debounced
 * or singleton kind's enqueue may join another job, which would answer for two places.
 */
function refuseUnrecordedLane(kind: AnyKind): void {
  const rule = coalesceRuleOf(kind);
  if (rule) {
    throw new ClientError(
      "validation_error",
      `kind "${kind.name}" is a ${rule.type} kind: it can't be in a group`,
      [
        {
          path: "kind",
          message: `a ${rule.type} kind's enqueue may join another job; a group needs one job per place`,
        },
      ],
    );
  }
  const lane = kind.lane ?? "fenced";
  if (!laneGuarantees[lane].groupChild) {
    throw new ClientError(
      "validation_error",
      `kind "${kind.name}" is ${lane}: its success leaves no record for a group`,
      [{ path: "kind", message: "use a fenced, lean or at-least-once kind in a group" }],
    );
  }
}

function checkOnComplete(deps: GroupDeps, request: ParsedGroupRequest): void {
  try {
    refuseUnrecordedLane(validateEnqueue(request.onComplete, deps.registry, deps.queues).kind);
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    throw new ClientError(
      err.code,
      `onComplete: ${err.message}`,
      (err.issues ?? []).map((i) => ({ ...i, path: `onComplete.${i.path}` })),
    );
  }
}

const requestHash = (request: ParsedGroupRequest) =>
  createHash("sha256")
    .update(
      JSON.stringify([
        request.children,
        request.onComplete,
        request.failure,
        request.sealed,
        request.expiresInSeconds ?? null,
      ]),
    )
    .digest("base64url");

/**
 * Creates a group and enqueues its children (docs/architecture.md §15): the group item (its slices
 * allocated), then each slice, then the children, each with its membership. A retry of the same request
 * (same id, same content) resumes instead of failing: ids are derived from the group and the membership,
 * and every write is conditional on its item's absence, so nothing is written or run twice.
 */
export async function createGroup(
  deps: GroupDeps,
  raw: unknown,
  origin?: GroupOrigin,
  trace?: string,
): Promise<CreatedGroup> {
  const request = parse(CreateGroupRequest, raw, "group request");
  await kindsReadyFor(deps.registry, [request.onComplete, ...request.children]);
  checkOnComplete(deps, request);
  const children = checkChildren(deps, request.children);
  const now = deps.clock.now();
  const id = origin?.groupId ?? request.id ?? ulid(now);
  const sealBy = now + (request.expiresInSeconds ?? DEFAULT_GROUP_EXPIRY_SECONDS) * 1000;
  const item: GroupItem = {
    ...groupKey(id),
    id,
    status: request.sealed ? "sealed" : "open",
    failure: request.failure,
    onComplete: {
      kind: request.onComplete.kind,
      payload: JSON.stringify(request.onComplete.payload ?? null),
      ...(request.onComplete.queue ? { queue: request.onComplete.queue } : {}),
    },
    slices: sliceCount(children.length),
    slicePartitions: deps.store.layout.slicePartitions,
    size: children.length,
    createdAt: now,
    sealBy,
    ...(request.sealed ? { sealedAt: now } : {}),
    completionJobId: completionJobId(id, now),
    requestHash: requestHash(request),
    ...(origin ? { parentJobId: origin.parentJobId } : {}),
    ...(origin?.member ? { member: origin.member } : {}),
    ...(trace ? { trace } : {}),
    ...groupIndexKeys(id, request.sealed ? now + GROUP_STALL_MS : sealBy),
  };
  const put = await putGroup(deps.store, item);
  let group = item;
  if (!put.created) {
    const same = put.current.requestHash === item.requestHash;
    if (!same && !origin)
      throw new ClientError("conflict", `group ${id} already exists (created by another request)`);
    group = put.current;
    if (!same) {
      deps.log.warn("a retried handler asked for its group with other children; keeping the first", {
        groupId: id,
      });
    }
    // Only an unfinished create is resumed: a finished group's children may be purged already, and
    // writing them again would run them again.
    if (!same || (group.status !== "open" && group.status !== "sealed")) {
      return { group: toGroupView(group, await countChildren(deps.store, group)), created: false };
    }
  }
  await writeChildren(deps, group, 0, children);
  await tryComplete(deps, group);
  return { group: await viewOf(deps, group.id, group), created: put.created };
}

/** Adds children to an open group; `seal` seals it in the same call. */
export async function addChildren(deps: GroupDeps, id: string, raw: unknown): Promise<GroupView> {
  const request = parse(AddChildrenRequest, raw, "children request");
  await kindsReadyFor(deps.registry, request.children);
  const children = checkChildren(deps, request.children);
  const slices = sliceCount(children.length);
  const group = await allocateSlices(deps.store, id, slices, children.length);
  await writeChildren(deps, group, group.slices - slices, children);
  return request.seal ? sealAndComplete(deps, id) : viewOf(deps, id, group);
}

export async function sealAndComplete(deps: GroupDeps, id: string): Promise<GroupView> {
  const group = await sealGroup(deps.store, id, deps.clock.now() + GROUP_STALL_MS);
  await tryComplete(deps, group);
  return viewOf(deps, id, group);
}

async function viewOf(deps: GroupDeps, id: string, fallback: GroupItem): Promise<GroupView> {
  const group = (await getGroup(deps.store, id)) ?? fallback;
  return toGroupView(group, await countChildren(deps.store, group));
}

const writes = pLimit(16);

/**
 * Writes the slices from `firstSlice` on, then enqueues their children: a child is never out
 * before the slice that records it. A send that fails is tried once more; still failing, the
 * request fails (a retry of it resumes), and a child left unsent is recorded dead by the reaper.
 */
async function writeChildren(
  deps: GroupDeps,
  group: GroupItem,
  firstSlice: number,
  children: readonly CheckedEnqueue[],
): Promise<void> {
  const sliceTtl = retentionExpiry(group.createdAt, SLICE_RETENTION_DAYS);
  const entries: CheckedEnqueue[] = children.map((child, i) => {
    const s = firstSlice + Math.floor(i / SLICE_SIZE);
    const p = i % SLICE_SIZE;
    return {
      ...child,
      job: {
        id: childJobId(group.id, group.createdAt, s, p),
        member: { g: group.id, s, p, ...(group.slicePartitions ? { n: group.slicePartitions } : {}) },
        ...(group.trace ? { trace: group.trace } : {}),
      },
    };
  });
  await Promise.all(
    Array.from({ length: sliceCount(entries.length) }, (_, k) =>
      writes(() =>
        putSlice(deps.store, {
          ...sliceKey(group.id, firstSlice + k, group.slicePartitions),
          groupId: group.id,
          slice: firstSlice + k,
          ids: entries.slice(k * SLICE_SIZE, (k + 1) * SLICE_SIZE).map((e) => e.job?.id ?? ""),
          createdAt: deps.clock.now(),
          expiresAt: sliceTtl,
        }),
      ),
    ),
  );
  let pending = entries;
  for (let round = 0; round < 2 && pending.length > 0; round++) {
    const results = await deps.producer.enqueueChecked(pending);
    pending = pending.filter((_, i) => results[i]?.error !== undefined);
  }
  if (pending.length > 0)
    throw new TransientError(`${pending.length} children of group ${group.id} could not be queued; retry`);
}
