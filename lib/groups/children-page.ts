import { InvalidStoreInput } from "../errors.ts";
import type {
  ChildrenQuery,
  GroupChildrenPage,
  GroupChildStatus,
  GroupChildView,
} from "../job/group-schemas.ts";
import type { StoreContext } from "../store/context.ts";
import { recordedStatus } from "../store/group-item.ts";
import { getJobs, listSlices } from "../store/group-read-ops.ts";

/**
 * One page of a group's children in the order they were added: id, status, and the result or last
 * error. Statuses come from the slices, so a status filter reads only the jobs it returns. The cursor
 * is the next slice's number; each page reads at most 8 slices (200 children), whatever the filter.
 */
export async function childrenPage(
  store: StoreContext,
  groupId: string,
  query: ChildrenQuery = {},
): Promise<GroupChildrenPage> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 100);
  let from = query.cursor === undefined || query.cursor === "" ? 0 : Number(query.cursor);
  if (!Number.isSafeInteger(from) || from < 0) throw new InvalidStoreInput("not a cursor this API returned");
  const picked: { id: string; status: GroupChildStatus }[] = [];
  let next: number | undefined = from;
  for (let reads = 0; reads < 8 && next !== undefined && picked.length < limit; reads++) {
    const page = await listSlices(store, groupId, from, 1);
    const slice = page.slices[0];
    if (!slice) {
      next = undefined;
      break;
    }
    slice.ids.forEach((id, p) => {
      const status = recordedStatus(slice, p) ?? "pending";
      if (!query.status || query.status === status) picked.push({ id, status });
    });
    from = slice.slice + 1;
    next = page.next === undefined ? undefined : from;
  }
  const jobs = await getJobs(
    store,
    picked.map((c) => c.id),
    { consistent: false },
  );
  const items = picked.map(({ id, status }): GroupChildView => {
    const job = jobs.get(id);
    return {
      id,
      status,
      ...(job?.result !== undefined ? { result: JSON.parse(job.result) } : {}),
      ...(job?.lastError !== undefined ? { lastError: job.lastError } : {}),
    };
  });
  return { items, ...(next !== undefined ? { cursor: String(next) } : {}) };
}
