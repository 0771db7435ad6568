import { ConfigError } from "../errors.ts";
import type { BatchSettings } from "../job/batch.ts";
import { type KindDefinition, onExhaustedChoices } from "../job/kind.ts";
import { type DeliveryLane, deliveryLanes, isClaimed } from "../job/lanes.ts";
import { MAX_VISIBILITY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { type EventDeclaration, eventDeclarationProblems } from "./event-declaration.ts";
import { MAX_CHILDREN_PER_KIND, type PoolKindSpec } from "./pool-kind.ts";
import {
  LAMBDA_INIT_SECONDS,
  MAX_CONCURRENCY,
  MIN_CONCURRENCY,
  minimumVisibilitySeconds,
  type QueueDeclaration,
  tierOf,
  visibilityTimeoutSeconds,
} from "./queue-declaration.ts";
import { type RateLimitScope, validateRateLimitScopes } from "./rate-limit-scope.ts";
import { type ScaleDeclaration, scaleProblems } from "./scale.ts";
import { batchKindProblems } from "./validate-batch.ts";
import { coalesceKindProblems } from "./validate-coalesce.ts";
import { flowKindProblems } from "./validate-flow.ts";
import { versionProblems } from "./validate-version.ts";

/** What the validator reads of an app (docs/architecture.md §2): the app value itself, or parts of one. */
export interface Declarations {
  queues: readonly QueueDeclaration[];
  /** Lambda-tier kinds; the pool's own kinds are `poolKinds`. */
  kinds: readonly (Pick<
    KindDefinition,
    | "name"
    | "queue"
    | "maxAttempts"
    | "timeoutSeconds"
    | "lane"
    | "startWithinSeconds"
    | "debounce"
    | "singleton"
    | "onExhausted"
    | "version"
    | "onVersionChange"
  > & {
    batch?: { settings: BatchSettings };
  })[];
  poolKinds: readonly PoolKindSpec[];
  schedules?: readonly { name: string; kind: string; queue?: string }[];
  rateLimits?: readonly RateLimitScope[];
  scale?: ScaleDeclaration;
  events?: readonly EventDeclaration[];
}

/** Queue names become SQS queue, Lambda function and alarm names, so they stay short and plain. */
const QUEUE_NAME = /^[a-z][a-z0-9-]{0,39}$/;
/** A Lambda function runs for at most 15 minutes. */
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** A Lambda SQS event source's largest batch (standard queues, with a batching window). */
const MAX_EVENT_SOURCE_BATCH = 10_000;
/** Each attempt costs at least one receive; duplicates and lease takeovers cost more. */
const RECEIVES_PER_ATTEMPT = 2;

const within = (v: number, lo: number, hi: number) => Number.isInteger(v) && v >= lo && v <= hi;

function queueProblems(q: QueueDeclaration, kindsOnQueue: { name: string; maxAttempts: number }[]) {
  const problems: string[] = [];
  const at = `queue "${q.name}"`;
  const lambda = tierOf(q) === "lambda";
  if (!QUEUE_NAME.test(q.name))
    problems.push(`${at}: name must match ${QUEUE_NAME} (it becomes part of AWS resource names)`);
  // Lambda's event source gathers more than one receive's 10 only with a batching window.
  const maxBatch = lambda && q.batchWindowSeconds >= 1 ? MAX_EVENT_SOURCE_BATCH : 10;
  if (!within(q.batchSize, 1, maxBatch))
    problems.push(
      `${at}: batchSize ${q.batchSize} is outside 1..${maxBatch} (${lambda ? "over 10 needs batchWindowSeconds ≥ 1; " : ""}one SQS receive returns at most 10)`,
    );
  if (!within(q.batchWindowSeconds, 0, 300))
    problems.push(`${at}: batchWindowSeconds ${q.batchWindowSeconds} is outside 0..300`);
  if (lambda && !within(q.maxConcurrency, MIN_CONCURRENCY, MAX_CONCURRENCY))
    problems.push(
      `${at}: maxConcurrency ${q.maxConcurrency} is outside ${MIN_CONCURRENCY}..${MAX_CONCURRENCY} (Lambda event source maximum concurrency)`,
    );
  if (lambda && q.workerTimeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS)
    problems.push(
      `${at}: workerTimeoutSeconds ${q.workerTimeoutSeconds} is over Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS}s limit`,
    );
  // A visibility shorter than the run lets SQS hand a running job to a second worker.
  const visibility = visibilityTimeoutSeconds(q);
  const needed = minimumVisibilitySeconds(q);
  if (visibility < needed)
    problems.push(
      `${at}: visibility timeout ${visibility}s is under workerTimeoutSeconds ${q.workerTimeoutSeconds} + batchWindowSeconds ${q.batchWindowSeconds} + ${LAMBDA_INIT_SECONDS}s of init = ${needed}s (SQS caps visibility at ${MAX_VISIBILITY_SECONDS}s, so workerTimeoutSeconds can be at most ${MAX_VISIBILITY_SECONDS - (needed - q.workerTimeoutSeconds)})`,
    );
  // The type requires it, but a cast or a JS caller can still leave it out.
  const mrc = q.maxReceiveCount as number | undefined;
  if (mrc === undefined || !within(mrc, 1, 1000)) {
    const why = mrc === undefined ? "is missing" : `${mrc} is not an integer in 1..1000`;
    problems.push(`${at} has no dead-letter queue: maxReceiveCount ${why} (SQS redrive limits)`);
  } else {
    const top = kindsOnQueue.reduce<(typeof kindsOnQueue)[number] | undefined>(
      (best, k) => (best && best.maxAttempts >= k.maxAttempts ? best : k),
      undefined,
    );
    // Redriven before its last attempt, a job lands in the DLQ while the table still says queued.
    if (top && mrc < RECEIVES_PER_ATTEMPT * top.maxAttempts)
      problems.push(
        `${at}: maxReceiveCount ${mrc} is under ${RECEIVES_PER_ATTEMPT} × the largest maxAttempts on it (kind "${top.name}": ${top.maxAttempts}) = ${RECEIVES_PER_ATTEMPT * top.maxAttempts}`,
      );
  }
  return problems;
}

/** A paused job waits in its item: only the lanes that claim their runs have one (§16, §21). */
function onExhaustedProblems(label: string, onExhausted: unknown, lane: DeliveryLane | undefined): string[] {
  if (onExhausted === undefined) return [];
  if (!(onExhaustedChoices as readonly unknown[]).includes(onExhausted))
    return [`${label}: onExhausted "${String(onExhausted)}" is not one of ${onExhaustedChoices.join(", ")}`];
  if (onExhausted === "pause" && lane !== undefined && !isClaimed(lane))
    return [
      `${label}: onExhausted "pause" needs a lane that claims its runs (fenced or lean); lane "${lane}" keeps no job item to pause in when the attempts run out`,
    ];
  return [];
}

/** Every problem with the declarations, each naming its queue, kind or schedule and the numbers. */
export function validateDeclarations(d: Declarations): string[] {
  const problems: string[] = [];
  const byName = new Map<string, QueueDeclaration>();
  for (const q of d.queues) {
    if (byName.has(q.name)) problems.push(`queue "${q.name}" is declared twice`);
    else byName.set(q.name, q);
  }

  const all = [
    ...d.kinds.map((k) => ({ ...k, tier: "lambda" as const, label: `kind "${k.name}"` })),
    ...d.poolKinds.map((k) => ({ ...k, tier: "pool" as const, label: `pool kind "${k.name}"` })),
  ];
  const kindQueue = new Map<string, string>();
  for (const k of all) {
    if (kindQueue.has(k.name)) problems.push(`kind "${k.name}" is declared twice`);
    else kindQueue.set(k.name, k.queue);
    const q = byName.get(k.queue);
    if (!q) {
      problems.push(`${k.label}: queue "${k.queue}" is not declared`);
    } else {
      if (tierOf(q) !== k.tier)
        problems.push(`${k.label} runs on the ${k.tier} tier, but queue "${q.name}" is ${tierOf(q)}-tier`);
      // The queue's worker timeout bounds a run: longer, and the worker (or visibility) ends first.
      if (k.timeoutSeconds > q.workerTimeoutSeconds)
        problems.push(
          `${k.label}: timeoutSeconds ${k.timeoutSeconds} is over queue "${q.name}"'s workerTimeoutSeconds ${q.workerTimeoutSeconds}; the worker would be killed first`,
        );
    }
    const lane = "lane" in k ? k.lane : undefined;
    const batch = k.tier === "pool" ? k.batch : "batch" in k ? k.batch?.settings : undefined;
    if (batch) problems.push(...batchKindProblems(k.label, batch, lane, q, k.tier));
    problems.push(...coalesceKindProblems(k.label, { ...k, lane, batch }, q));
    problems.push(...flowKindProblems(k.label, { ...k, lane, batch }));
    if (lane !== undefined && !(deliveryLanes as readonly string[]).includes(lane))
      problems.push(`${k.label}: lane "${lane}" is not one of ${deliveryLanes.join(", ")}`);
    problems.push(...onExhaustedProblems(k.label, k.onExhausted, lane));
    if (k.tier === "lambda") problems.push(...versionProblems(k.label, k));
    const startWithin = "startWithinSeconds" in k ? k.startWithinSeconds : undefined;
    if (startWithin !== undefined && !within(startWithin, 1, QUEUE_MESSAGE_RETENTION_SECONDS))
      problems.push(
        `${k.label}: startWithinSeconds must be a whole number from 1 to ${QUEUE_MESSAGE_RETENTION_SECONDS} (SQS's retention), got ${startWithin}`,
      );
    if (k.tier === "lambda" && k.timeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS)
      problems.push(
        `${k.label}: timeoutSeconds ${k.timeoutSeconds} is over Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS}s limit`,
      );
  }

  for (const p of d.poolKinds) {
    const at = `pool kind "${p.name}"`;
    if (!(p.soft >= 1)) problems.push(`${at}: soft ${p.soft} is under 1`);
    if (p.soft > p.hard) problems.push(`${at}: soft ${p.soft} is above hard ${p.hard}`);
    if (p.hard > MAX_CHILDREN_PER_KIND)
      problems.push(`${at}: hard ${p.hard} is over MAX_CHILDREN_PER_KIND ${MAX_CHILDREN_PER_KIND}`);
  }

  for (const q of byName.values()) {
    const onQueue = all.filter((k) => k.queue === q.name);
    problems.push(...queueProblems(q, onQueue));
  }

  for (const s of d.schedules ?? []) {
    const at = `schedule "${s.name}"`;
    const home = kindQueue.get(s.kind);
    if (home === undefined) problems.push(`${at}: kind "${s.kind}" is not declared`);
    if (s.queue === undefined) continue;
    const q = byName.get(s.queue);
    const homeQ = home === undefined ? undefined : byName.get(home);
    if (!q) problems.push(`${at}: queue "${s.queue}" is not declared`);
    // The enqueue path refuses a kind on the other tier, so every fire would fail.
    else if (homeQ && tierOf(homeQ) !== tierOf(q))
      problems.push(
        `${at}: kind "${s.kind}" runs on the ${tierOf(homeQ)} tier, but queue "${q.name}" is ${tierOf(q)}-tier`,
      );
  }
  try {
    validateRateLimitScopes(d.rateLimits ?? []);
  } catch (err) {
    problems.push((err as Error).message);
  }
  problems.push(...scaleProblems(d.scale));
  problems.push(...eventDeclarationProblems(d.events ?? []));
  return problems;
}

/** Declarations that cannot be deployed or run; the message lists every problem. */
export class DeclarationError extends ConfigError {
  override readonly name = "DeclarationError";
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid declarations (${problems.length}):\n- ${problems.join("\n- ")}`);
    this.problems = problems;
  }
}

/** Throws DeclarationError unless every declaration is sound; defineApp and the deploy call this first. */
export function assertValidDeclarations(d: Declarations): void {
  const problems = validateDeclarations(d);
  if (problems.length > 0) throw new DeclarationError(problems);
}
