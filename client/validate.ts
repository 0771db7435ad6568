import type { AppNames } from "../lib/declarations/app-names.ts";
import { ClientError } from "../lib/errors.ts";
import { checkEnqueueRequest, type RequestKind } from "../lib/job/check-request.ts";
import { kindReady } from "../lib/job/kind-loading.ts";
import { SkyforgeApiError } from "./errors.ts";

/**
 * The checks POST /jobs makes from the app alone: the very function the producer calls
 * (lib/job/check-request.ts), so a client given the app refuses a bad request without sending it
 * and the caller sees the error the API would have answered. The API checks again: a pool kind
 * added by the operator's file, or the payload's size inside its SQS message, only it can know.
 */
export type EnqueueCheck = (raw: unknown) => Promise<SkyforgeApiError | undefined>;

export function enqueueCheck(app: AppNames): EnqueueCheck {
  const kinds = new Map<string, RequestKind>();
  const appKinds = new Map(app.kinds.map((k) => [k.name, k]));
  // The schema read at each check: a kind whose module loads on first use has it once loaded.
  for (const k of app.kinds)
    kinds.set(k.name, {
      name: k.name,
      queue: k.queue,
      get payload() {
        return k.payload;
      },
    });
  // A pool kind's payload is any JSON (its child program validates it): the request schema checks that.
  for (const p of app.poolKinds) kinds.set(p.name, { name: p.name, queue: p.queue });

  return async (raw) => {
    // A kind whose schema loads on first use loads it now, as the producer would (lib/job/kind-loading.ts).
    const named = (raw as { kind?: unknown } | null | undefined)?.kind;
    if (typeof named === "string") await kindReady(appKinds.get(named));
    const checked = checkEnqueueRequest(raw, kinds, app.queues);
    if (!(checked instanceof ClientError)) return undefined;
    return SkyforgeApiError.refused(checked.code, checked.message, checked.issues);
  };
}
