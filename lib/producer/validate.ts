import type { QueueDeclaration } from "../app/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import { type CheckedRequest, checkEnqueueRequest } from "../job/check-request.ts";
import type { AnyKind } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";
import { payloadBytesInMessage } from "../transport/job-message.ts";

export type ValidRequest = CheckedRequest<AnyKind>;

/**
 * Checks a raw request against the contract, its kind's payload schema and the declared queues
 * (lib/job/check-request.ts, the same checks the client makes), and that the payload fits its SQS
 * message. The request schema checks the payload's nesting depth before anything recurses into it,
 * so a payload nested 10 000 deep is a 400 here, never a stack overflow.
 */
export function validateEnqueue(
  raw: unknown,
  registry: KindRegistry,
  queues: readonly QueueDeclaration[],
): ValidRequest {
  const checked = checkEnqueueRequest(raw, registry, queues, fitsItsMessage);
  if (checked instanceof ClientError) throw checked;
  return checked;
}

function fitsItsMessage(payloadJson: string): ClientError | undefined {
  const inMessage = payloadBytesInMessage(payloadJson);
  if (inMessage.bytes <= inMessage.max) return undefined;
  return new ClientError(
    "payload_too_large",
    `payload takes ${inMessage.bytes} bytes in the SQS message, over its ${inMessage.max}: there it is a JSON string written as ASCII, where a quote or backslash takes 2 bytes and each non-ASCII UTF-16 unit 6`,
  );
}
