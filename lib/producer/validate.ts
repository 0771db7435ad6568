import { type QueueDeclaration, tierOf } from "../app/queue-declaration.ts";
import { ClientError, issuesOf } from "../errors.ts";
import type { AnyKind } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";
import { EnqueueRequest, MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { payloadBytesInMessage } from "../transport/job-message.ts";

export interface ValidRequest {
  request: EnqueueRequest;
  kind: AnyKind;
  queue: QueueDeclaration;
  payloadJson: string;
}

/**
 * Checks a raw request against the contract, its kind's payload schema and the declared queues.
 * The request schema checks the payload's nesting depth before anything recurses into it, so a
 * payload nested 10 000 deep is a 400 here, never a stack overflow.
 */
export function validateEnqueue(
  raw: unknown,
  registry: KindRegistry,
  queues: readonly QueueDeclaration[],
): ValidRequest {
  const parsed = EnqueueRequest.safeParse(raw);
  if (!parsed.success)
    throw new ClientError("validation_error", "the enqueue request is invalid", issuesOf(parsed.error));
  const request = parsed.data;
  const kind = registry.get(request.kind);
  if (!kind) {
    throw new ClientError(
      "unknown_kind",
      `unknown kind "${request.kind}"; known kinds: ${[...registry.keys()].join(", ")}`,
    );
  }
  const payloadJson = JSON.stringify(request.payload ?? null);
  if (Buffer.byteLength(payloadJson) > MAX_PAYLOAD_BYTES) {
    throw new ClientError("payload_too_large", `payload is over ${MAX_PAYLOAD_BYTES} bytes once serialized`);
  }
  const inMessage = payloadBytesInMessage(payloadJson);
  if (inMessage.bytes > inMessage.max) {
    throw new ClientError(
      "payload_too_large",
      `payload takes ${inMessage.bytes} bytes in the SQS message, over its ${inMessage.max}: there it is a JSON string written as ASCII, where a quote or backslash takes 2 bytes and each non-ASCII UTF-16 unit 6`,
    );
  }
  const payload = kind.payload.safeParse(request.payload ?? null);
  if (!payload.success) {
    throw new ClientError(
      "validation_error",
      `payload does not match kind "${kind.name}"`,
      issuesOf(payload.error, ["payload"]),
    );
  }
  const queueName = request.queue ?? kind.queue;
  const queue = queues.find((q) => q.name === queueName);
  if (!queue)
    throw new ClientError("validation_error", `unknown queue "${queueName}"`, [
      { path: "queue", message: "not declared" },
    ]);
  const home = queues.find((q) => q.name === kind.queue);
  if (home && tierOf(home) !== tierOf(queue)) {
    throw new ClientError(
      "validation_error",
      `kind "${kind.name}" runs on the ${tierOf(home)} tier, but queue "${queue.name}" is served by the ${tierOf(queue)} tier`,
      [{ path: "queue", message: `use a ${tierOf(home)}-tier queue such as "${home.name}"` }],
    );
  }
  return { request, kind, queue, payloadJson };
}
