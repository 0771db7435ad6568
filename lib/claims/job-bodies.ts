import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { JobView } from "../job/schemas.ts";
import type { StoreContext } from "../store/context.ts";
import { type JobItem, toJobView } from "../store/job-item.ts";
import { payloadKey } from "../store/keys.ts";
import { isClaimKeyOf, isResultKeyOf } from "./claim-keys.ts";
import { type ClaimStore, getClaim } from "./claim-store.ts";

/**
 * A job's payload JSON wherever it lives: inline, in its own item (payloadRef), or in the claims
 * bucket (payloadObject). undefined once its item or object has expired, and for an object key that
 * is not the job's own (an item seeded from a forged message before messages were checked): that
 * key is never read.
 */
export async function loadPayload(
  store: StoreContext,
  claims: ClaimStore,
  item: Pick<JobItem, "id" | "payload" | "payloadRef" | "payloadObject">,
): Promise<string | undefined> {
  if (!item.payloadObject) return loadTablePayload(store, item);
  return isClaimKeyOf(item.payloadObject, item.id, "payload")
    ? getClaim(claims, item.payloadObject)
    : undefined;
}

/** A payload kept in the table: inline, or in its own item (payloadRef). */
async function loadTablePayload(
  store: StoreContext,
  item: Pick<JobItem, "id" | "payload" | "payloadRef">,
): Promise<string | undefined> {
  if (!item.payloadRef) return item.payload;
  const out = await store.doc.send(
    new GetCommand({ TableName: store.table, Key: payloadKey(item.id), ReturnConsumedCapacity: "TOTAL" }),
  );
  return out.Item?.payload as string | undefined;
}

/** A finished job's result JSON: inline, or from the claims bucket (resultObject, one of its own keys). */
export async function loadResult(
  claims: ClaimStore,
  item: Pick<JobItem, "id" | "result" | "resultObject">,
): Promise<string | undefined> {
  if (!item.resultObject) return item.result;
  return isResultKeyOf(item.resultObject, item.id) ? getClaim(claims, item.resultObject) : undefined;
}

/**
 * A job as a list page shows it: bodies kept in the table, not those in the claims bucket, which
 * are named in `omitted` (a page of large jobs would pass Lambda's 6 MB answer).
 */
export async function listedJobView(store: StoreContext, item: JobItem): Promise<JobView> {
  const omitted = [
    ...(item.payloadObject ? ["payload" as const] : []),
    ...(item.resultObject ? ["result" as const] : []),
  ];
  const payload = item.payloadObject ? undefined : await loadTablePayload(store, item);
  return { ...toJobView(item, payload), ...(omitted.length > 0 ? { omitted } : {}) };
}

/** The public view of a job with its payload and result loaded from wherever they live. */
export async function loadJobView(store: StoreContext, claims: ClaimStore, item: JobItem): Promise<JobView> {
  const [payload, result] = await Promise.all([loadPayload(store, claims, item), loadResult(claims, item)]);
  return toJobView(item, payload, result);
}
