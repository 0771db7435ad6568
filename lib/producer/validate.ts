import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import { type CheckedRequest, checkEnqueueRequest } from "../job/check-request.ts";
import type { AnyKind } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";

export type ValidRequest = CheckedRequest<AnyKind>;

/**
 * Checks a raw request against the contract, its kind's payload schema and the declared queues
 * (lib/job/check-request.ts, the same checks the client makes). The request schema checks the payload's nesting depth before anything recurses into it,
 * so a payload nested 10 000 deep is a 400 here, never a stack overflow.
 */
export function validateEnqueue(
  raw: unknown,
  registry: KindRegistry,
  queues: readonly QueueDeclaration[],
): ValidRequest {
  const checked = checkEnqueueRequest(raw, registry, queues);
  if (checked instanceof ClientError) throw checked;
  return checked;
}
