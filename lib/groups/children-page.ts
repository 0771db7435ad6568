import { InvalidStoreInput } from "../errors.ts";
import type {
  ChildrenQuery,
  GroupChildrenPage,
  GroupChildStatus,
  GroupChildView,
} from "../job/group-schemas.ts";
import type { StoreContext } from "../store/context.ts";
import { type GroupItem, recordedStatus, SLICE_SIZE } from "../store/group-item.ts";
import { getJobs, listSlices } from "../store/group-read-ops.ts";

/** Slices one page reads at most, whatever the filter: a page's work is bounded. */
const MAX_SLICES_PER_PAGE = 8;

/** Where a page starts: a slice, and a position in it. The cursor is `<slice>.<position>`. */
function decodeCursor(cursor: string | undefined): { slice: number; position: number } {
  if (cursor === undefined || cursor === "") return { slice: 0, position: 0 };
  const match = /^([0-9]{1,7})(?:\.([0-9]{1,2}))?$/.exec(cursor);
  const position = Number(match?.[2] ?? 0);
  if (!match || position >= SLICE_SIZE) throw new InvalidStoreInput("not a cursor this API returned");
  return { slice: Number(match[1]), position };
}

/**
 * One page of a group's children in the order they were added: id, status, and the result or last
 * error. Statuses come from the slices, so a status filter reads only the jobs it returns. A page has
 * at most `limit` children and reads at most 8 slices (one Query) plus one BatchGetItem of the jobs
 * it returns; a cursor comes back while slices remain.
 */
export async function childrenPage(
  store: StoreContext,
  group: Pick<GroupItem, "id" | "slices">,
  query: ChildrenQuery = {},
): Promise<GroupChildrenPage> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 100);
  const start = decodeCursor(query.cursor);
  const picked: { id: string; status: GroupChildStatus }[] = [];
  let next: { slice: number; position: number } | undefined;
  if (start.slice < group.slices) {
    const { slices } = await listSlices(store, group, start.slice, MAX_SLICES_PER_PAGE);
    next = { slice: Math.min(start.slice + MAX_SLICES_PER_PAGE, group.slices), position: 0 };
    scan: for (const slice of slices) {
      const from = slice.slice === start.slice ? start.position : 0;
      for (let p = from; p < slice.ids.length; p++) {
        if (picked.length === limit) {
          next = { slice: slice.slice, position: p };
          break scan;
        }
        const status = recordedStatus(slice, p) ?? "pending";
        if (!query.status || query.status === status) picked.push({ id: slice.ids[p] ?? "", status });
      }
      next = { slice: slice.slice + 1, position: 0 };
    }
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
      ...(job?.resultObject !== undefined ? { omitted: ["result"] as ["result"] } : {}),
      ...(job?.lastError !== undefined ? { lastError: job.lastError } : {}),
    };
  });
  const more = next && next.slice < group.slices;
  return { items, ...(more && next ? { cursor: `${next.slice}.${next.position}` } : {}) };
}
