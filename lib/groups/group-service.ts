import { ClientError } from "../errors.ts";
import type { ChildrenQuery, GroupChildrenPage, GroupView } from "../job/group-schemas.ts";
import type { CompletionContext, GroupSpec } from "../job/kind.ts";
import type { GroupService } from "../services/group-service.ts";
import { getGroup } from "../store/group-read-ops.ts";
import { noteChildGroup } from "../store/job-group-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { checkGroups, type GroupCheckReport } from "./check-groups.ts";
import { childrenPage } from "./children-page.ts";
import { addChildren, createGroupTraced, sealAndComplete } from "./create-group.ts";
import type { GroupDeps } from "./group-deps.ts";
import { cancelGroupTree, recordEnd } from "./group-end.ts";
import { nestedGroupId } from "./group-ids.ts";
import { countChildren, toGroupView } from "./group-view.ts";

/** Job groups (docs/architecture.md §15): the engine's one door to them. */
export class Groups implements GroupService {
  private readonly deps: GroupDeps;

  constructor(deps: GroupDeps) {
    this.deps = deps;
  }

  /** `trace`: the caller's W3C trace context (a traceparent header or Invoke field). */
  create(raw: unknown, trace?: string) {
    return createGroupTraced(this.deps, raw, undefined, trace);
  }

  /** `ctx.group`: one group per (job, step), which takes over the job's membership in its own group. */
  async createFromJob(job: JobItem, fence: string | undefined, spec: GroupSpec): Promise<GroupView> {
    if (fence === undefined) {
      throw new ClientError(
        "validation_error",
        `ctx.group needs a claimed lane: kind "${job.kind}" runs at-least-once or fire-and-forget, without a fence`,
      );
    }
    const { step = spec.onComplete.kind, ...request } = spec;
    const groupId = nestedGroupId(job.id, step);
    const noted = await noteChildGroup(this.deps.store, job.id, fence, groupId);
    if (!noted) throw new ClientError("conflict", "this run lost its lease; the group was not created");
    const member = noted.member && noted.handoff === groupId ? noted.member : undefined;
    // The job's trace here is its run's (lib/runtime/handler-context.ts): the group is a span under it.
    const created = await createGroupTraced(
      this.deps,
      { ...request, children: inheritTags(request.children, job.tags), sealed: true },
      {
        groupId,
        parentJobId: job.id,
        ...(member ? { member } : {}),
      },
      job.trace,
    );
    return created.group;
  }

  addChildren(id: string, raw: unknown) {
    return addChildren(this.deps, id, raw);
  }

  seal(id: string) {
    return sealAndComplete(this.deps, id);
  }

  async get(id: string): Promise<GroupView> {
    const group = await getGroup(this.deps.store, id);
    if (!group) throw new ClientError("not_found", `group ${id} not found`);
    return toGroupView(group, await countChildren(this.deps.store, group));
  }

  async children(id: string, query: ChildrenQuery): Promise<GroupChildrenPage> {
    const group = await getGroup(this.deps.store, id);
    if (!group) throw new ClientError("not_found", `group ${id} not found`);
    return childrenPage(this.deps.store, group, query);
  }

  async cancel(id: string): Promise<GroupView> {
    const group = await cancelGroupTree(this.deps, id);
    if (!group) throw new ClientError("not_found", `group ${id} not found`);
    if (group.status !== "cancelled") {
      throw new ClientError("conflict", `group ${id} already ${group.status}; it can no longer be cancelled`);
    }
    return toGroupView(group, await countChildren(this.deps.store, group));
  }

  recordEnd(job: JobItem): Promise<void> {
    return recordEnd(this.deps, job);
  }

  /** What a completion job's ctx.completion holds; undefined for any other job. */
  async completionFor(job: JobItem): Promise<CompletionContext | undefined> {
    if (!job.completes) return undefined;
    const group = await getGroup(this.deps.store, job.completes);
    if (!group) return undefined;
    const counts = group.counts ?? { done: 0, dead: 0, cancelled: 0 };
    const store = this.deps.store;
    return {
      groupId: group.id,
      status: group.outcome ?? "failed",
      counts: { ...counts, total: counts.done + counts.dead + counts.cancelled, pending: 0 },
      ...(group.failedChild ? { failedChild: group.failedChild } : {}),
      ...(group.expired ? { expired: true } : {}),
      children: (query = {}) => childrenPage(store, group, query),
    };
  }

  check(): Promise<GroupCheckReport> {
    return checkGroups(this.deps);
  }
}

/** A child given as an object without its own tags takes the creating job's (docs/guide/finding-runs.md). */
function inheritTags(children: readonly unknown[], tags: readonly string[] | undefined): unknown[] {
  if (!tags?.length) return [...children];
  return children.map((child) =>
    child !== null && typeof child === "object" && !Array.isArray(child) && !("tags" in child)
      ? { ...child, tags }
      : child,
  );
}
