import type { AppNames } from "../lib/app/define-app.ts";
import { tierOf } from "../lib/app/queue-declaration.ts";
import { issuesOf } from "../lib/errors.ts";
import { EnqueueRequest, MAX_PAYLOAD_BYTES } from "../lib/job/schemas.ts";
import { SkyforgeApiError } from "./errors.ts";

/**
 * The checks POST /jobs makes from the app alone (lib/producer/validate.ts), in the same order and
 * with the same codes and messages, so a client given the app refuses a bad request without sending
 * it and the caller sees the error the API would have answered. The API checks again: a pool kind
 * added by the operator's file, or the payload's size inside its SQS message, only it can know.
 */
export type EnqueueCheck = (raw: unknown) => SkyforgeApiError | undefined;

export function enqueueCheck(app: AppNames): EnqueueCheck {
  const kinds = new Map<string, { queue: string; payload?: AppNames["kinds"][number]["payload"] }>();
  for (const k of app.kinds) kinds.set(k.name, { queue: k.queue, payload: k.payload });
  // A pool kind's payload is any JSON (its child program validates it): the request schema checks that.
  for (const p of app.poolKinds) kinds.set(p.name, { queue: p.queue });

  return (raw) => {
    const parsed = EnqueueRequest.safeParse(raw);
    if (!parsed.success)
      return SkyforgeApiError.refused(
        "validation_error",
        "the enqueue request is invalid",
        issuesOf(parsed.error),
      );
    const request = parsed.data;
    const kind = kinds.get(request.kind);
    if (!kind) {
      return SkyforgeApiError.refused(
        "unknown_kind",
        `unknown kind "${request.kind}"; known kinds: ${[...kinds.keys()].join(", ")}`,
      );
    }
    if (Buffer.byteLength(JSON.stringify(request.payload ?? null)) > MAX_PAYLOAD_BYTES) {
      return SkyforgeApiError.refused(
        "payload_too_large",
        `payload is over ${MAX_PAYLOAD_BYTES} bytes once serialized`,
      );
    }
    const payload = kind.payload?.safeParse(request.payload ?? null);
    if (payload && !payload.success) {
      return SkyforgeApiError.refused(
        "validation_error",
        `payload does not match kind "${request.kind}"`,
        issuesOf(payload.error, ["payload"]),
      );
    }
    const queueName = request.queue ?? kind.queue;
    const queue = app.queues.find((q) => q.name === queueName);
    if (!queue) {
      return SkyforgeApiError.refused("validation_error", `unknown queue "${queueName}"`, [
        { path: "queue", message: "not declared" },
      ]);
    }
    const home = app.queues.find((q) => q.name === kind.queue);
    if (home && tierOf(home) !== tierOf(queue)) {
      return SkyforgeApiError.refused(
        "validation_error",
        `kind "${request.kind}" runs on the ${tierOf(home)} tier, but queue "${queue.name}" is served by the ${tierOf(queue)} tier`,
        [{ path: "queue", message: `use a ${tierOf(home)}-tier queue such as "${home.name}"` }],
      );
    }
    return undefined;
  };
}
