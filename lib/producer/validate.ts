import type { z } from "zod";
import { type QueueDeclaration, tierOf } from "../app/queue-declaration.ts";
import { ClientError, issuesOf } from "../errors.ts";
import type { AnyKind } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";
import { EnqueueRequest, MAX_PAYLOAD_BYTES } from "../job/schemas.ts";

export interface ValidRequest {
  request: EnqueueRequest;
  kind: AnyKind;
  queue: QueueDeclaration;
  payloadJson: string;
}

/** Checks a raw request against the contract, its kind's payload schema and the declared queues. */
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
