import * as z from "zod";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { MAX_CONCURRENCY, MIN_CONCURRENCY } from "../declarations/queue-declaration.ts";
import type { BackoffPolicy } from "../job/kind.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import type { QueueState } from "../store/queue-state.ts";

/** What an operator may change on a running queue; the declaration supplies every default. */
export interface QueueSettings {
  paused: boolean;
  maxConcurrency: number;
  backoff: BackoffPolicy;
  retentionDays: { done: number; dead: number };
}

/** The declaration with the queue's stored overrides applied. */
export function effectiveSettings(q: QueueDeclaration, state: QueueState = {}): QueueSettings {
  return {
    paused: state.paused === true,
    maxConcurrency: state.maxConcurrency ?? q.maxConcurrency,
    backoff: {
      baseSeconds: state.backoffBaseSeconds ?? q.backoff.baseSeconds,
      maxSeconds: state.backoffMaxSeconds ?? q.backoff.maxSeconds,
    },
    retentionDays: {
      done: state.retentionDoneDays ?? q.retentionDays.done,
      dead: state.retentionDeadDays ?? q.retentionDays.dead,
    },
  };
}

/** The declaration as the worker should run it right now. */
export function withSettings(q: QueueDeclaration, s: QueueSettings): QueueDeclaration {
  return { ...q, maxConcurrency: s.maxConcurrency, backoff: s.backoff, retentionDays: s.retentionDays };
}

const seconds = z.number().int().min(1).max(MAX_VISIBILITY_SECONDS);
const days = z.number().int().min(1).max(3650);

interface QueuePatchFields {
  maxConcurrency?: number | undefined;
  backoff?: { baseSeconds?: number | undefined; maxSeconds?: number | undefined } | undefined;
  retentionDays?: { done?: number | undefined; dead?: number | undefined } | undefined;
}

/** `PATCH /queues/{name}` body. */
export const QueuePatch = z
  .object({
    maxConcurrency: z.number().int().min(MIN_CONCURRENCY).max(MAX_CONCURRENCY).optional(),
    backoff: z
      .object({ baseSeconds: seconds.optional(), maxSeconds: seconds.optional() })
      .strict()
      .optional(),
    retentionDays: z.object({ done: days.optional(), dead: days.optional() }).strict().optional(),
  })
  .strict()
  .refine((p) => Object.keys(patchAttributes(p)).length > 0, {
    message:
      "give at least one setting: maxConcurrency, backoff.baseSeconds, backoff.maxSeconds, retentionDays.done or retentionDays.dead",
  });
export type QueuePatch = z.infer<typeof QueuePatch>;

/** The stored attributes a patch sets (flat, so a partial nested patch is a plain SET). */
export function patchAttributes(p: QueuePatchFields): Partial<QueueState> {
  const attrs: Partial<QueueState> = {};
  if (p.maxConcurrency !== undefined) attrs.maxConcurrency = p.maxConcurrency;
  if (p.backoff?.baseSeconds !== undefined) attrs.backoffBaseSeconds = p.backoff.baseSeconds;
  if (p.backoff?.maxSeconds !== undefined) attrs.backoffMaxSeconds = p.backoff.maxSeconds;
  if (p.retentionDays?.done !== undefined) attrs.retentionDoneDays = p.retentionDays.done;
  if (p.retentionDays?.dead !== undefined) attrs.retentionDeadDays = p.retentionDays.dead;
  return attrs;
}
