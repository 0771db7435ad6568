import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import { type CheckedRequest, checkEnqueueRequest } from "../job/check-request.ts";
import type { AnyKind } from "../job/kind.ts";
import { kindReady } from "../job/kind-loading.ts";
import type { KindRegistry } from "../job/registry.ts";

export type ValidRequest = CheckedRequest<AnyKind>;

/**
 * Checks a raw request against the contract, its kind's payload schema and the declared queues
 * (lib/job/check-request.ts, the same checks the client makes). A kind whose schema loads on
 * first use must have loaded (kindsReadyFor). The request schema checks the payload's nesting
 * depth before anything recurses into it, so a payload nested 10 000 deep is a 400 here, never a
 * stack overflow.
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

/** The kind names raw requests give (a request without one is left to validateEnqueue's answer). */
function namedKinds(raws: readonly unknown[]): Set<string> {
  const names = new Set<string>();
  for (const raw of raws) {
    const kind = (raw as { kind?: unknown } | null | undefined)?.kind;
    if (typeof kind === "string") names.add(kind);
  }
  return names;
}

/**
 * Loads the modules of the kinds the raw requests name, where they load on first use
 * (lib/job/kind-loading.ts), before validateEnqueue reads their schemas. result: the kinds whose
 * module failed to load, each with its error (a batch fails their requests alone).
 */
export async function loadKindsOf(
  registry: KindRegistry,
  raws: readonly unknown[],
): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>();
  await Promise.all(
    [...namedKinds(raws)].map((name) => kindReady(registry.get(name)).catch((err) => failed.set(name, err))),
  );
  return failed;
}

/** The same, for callers that fail as a whole: the first kind that failed to load throws its error. */
export async function kindsReadyFor(registry: KindRegistry, raws: readonly unknown[]): Promise<void> {
  const [first] = (await loadKindsOf(registry, raws)).values();
  if (first !== undefined) throw first;
}
