import type { ChildrenQuery, GroupChildrenPage, GroupView } from "../job/group-schemas.ts";
import type { CompletionContext, GroupSpec } from "../job/kind.ts";
import type { JobItem } from "../store/job-item.ts";

/** Job groups (docs/architecture.md §15); lib/groups/group-service.ts. */
export interface GroupService {
  /** `trace`: the caller's W3C trace context, the group's span's parent (docs/architecture.md §23). */
  create(raw: unknown, trace?: string): Promise<{ group: GroupView; created: boolean }>;
  createFromJob(job: JobItem, fence: string | undefined, spec: GroupSpec): Promise<GroupView>;
  addChildren(id: string, raw: unknown): Promise<GroupView>;
  seal(id: string): Promise<GroupView>;
  get(id: string): Promise<GroupView>;
  children(id: string, query: ChildrenQuery): Promise<GroupChildrenPage>;
  cancel(id: string): Promise<GroupView>;
  /** A job became terminal: record it in its group, finish the group it completes. Idempotent. */
  recordEnd(job: JobItem): Promise<void>;
  completionFor(job: JobItem): Promise<CompletionContext | undefined>;
  check(): Promise<{ groupsChecked: number; groupsExpired: number; groupRepairs: number }>;
}
