import { ClientError } from "../errors.ts";
import type { JobView } from "../job/schemas.ts";
import { toJobView } from "../store/job-item.ts";
import type { JobStore } from "../store/job-store.ts";
import { messageFromItem } from "../transport/message-from-item.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";

/**
 * Operator retry of a dead or cancelled job: the store moves it to `scheduled` (indexed, so a crash
 * here still leaves it findable), then its message goes out, then it is marked queued.
 */
export async function redriveJob(store: JobStore, transport: SqsTransport, id: string): Promise<JobView> {
  const job = await store.getJob(id);
  if (!job) throw new ClientError("not_found", `job ${id} not found`);
  const moved = await store.redrive(job);
  const payload = (await store.loadPayload(moved)) ?? "null";
  await transport.send({ message: messageFromItem(moved, payload), delaySeconds: 0 });
  const queued = await store.markQueued(moved.id, moved.runAt);
  return toJobView(queued ? { ...moved, status: "queued" } : moved, payload);
}
