/**
 * Debounce and singleton (docs/architecture.md §19): a kind's jobs of one key, computed from the
 * payload at enqueue, share one job at a time. Every enqueue is answered with the id of the job
 * that will run for it. The rules are pure functions here; the store's writes carry them out
 * (lib/store/coalesce-ops.ts), and lib/coalesce/ uses them behind the Engine's CoalesceService.
 */

export const debounceModes = ["trailing", "leading", "collect"] as const;
export type DebounceMode = (typeof debounceModes)[number];

export const singletonModes = ["cancel-running", "queue-one"] as const;
export type SingletonMode = (typeof singletonModes)[number];

export interface DebounceSettings<P = unknown> {
  /** The burst a job belongs to, from its payload: a non-empty string of at most 256 characters
   * (MAX_BATCH_KEY_CHARS, as a batch key). */
  key(payload: P): string;
  /** A burst stays open while enqueues come less than this apart. */
  periodSeconds: number;
  /** A burst closes this long after its first enqueue however busy it is; none when absent. */
  maxDelaySeconds?: number;
  mode: DebounceMode;
}

export interface SingletonSettings<P = unknown> {
  /** The key of which at most one job runs at a time, from its payload (as a debounce key). */
  key(payload: P): string;
  mode: SingletonMode;
}

/**
 * A debounced or singleton job's payload lives in its item (a later enqueue replaces or adds to it
 * there), so it stays under the claim check's threshold: at most this many bytes of JSON.
 */
export const MAX_COALESCE_PAYLOAD_BYTES = 8 * 1024;
/** A collect burst closes once it has this many payloads, or this many bytes of them. */
export const MAX_COLLECT_ITEMS = 100;
export const MAX_COLLECT_BYTES = 256 * 1024;
/** A burst can't outlast what a waiting message can be hidden for (SQS: 12 h). */
export const MAX_DEBOUNCE_SECONDS = 12 * 3600;

/** How a kind coalesces its key's jobs (§19): debounce or singleton; a kind declares at most one of the two. */
export type CoalesceRule =
  | { type: "debounce"; mode: DebounceMode; key(payload: unknown): string; settings: DebounceSettings }
  | { type: "singleton"; mode: SingletonMode; key(payload: unknown): string };

export interface CoalesceKind {
  debounce?: DebounceSettings<never>;
  singleton?: SingletonSettings<never>;
}

export function coalesceRuleOf(kind: CoalesceKind): CoalesceRule | undefined {
  if (kind.debounce) {
    const settings = kind.debounce as DebounceSettings;
    return { type: "debounce", mode: settings.mode, key: (p) => settings.key(p), settings };
  }
  if (kind.singleton) {
    const settings = kind.singleton as SingletonSettings;
    return { type: "singleton", mode: settings.mode, key: (p) => settings.key(p) };
  }
  return undefined;
}

/**
 * A trailing or collect burst declared without a maximum delay closes after this many periods: its
 * message comes back (a receive, counted toward the queue's maxReceiveCount) about once a period
 * while the burst goes on, so no burst may go on for ever.
 */
export const DEFAULT_MAX_DELAY_PERIODS = 30;

/** The maximum delay in force (ms): the declared one, or the default above; none for leading. */
export function maxDelayMs(settings: DebounceSettings): number | undefined {
  if (settings.maxDelaySeconds !== undefined) return settings.maxDelaySeconds * 1000;
  if (settings.mode === "leading") return undefined;
  return Math.min(MAX_DEBOUNCE_SECONDS, settings.periodSeconds * DEFAULT_MAX_DELAY_PERIODS) * 1000;
}

/**
 * When a trailing or collect burst runs, given its first enqueue and the latest: a period after the
 * latest, but never past the maximum delay after the first.
 */
export function burstRunAt(firstAt: number, latestAt: number, settings: DebounceSettings): number {
  const quiet = latestAt + settings.periodSeconds * 1000;
  const maxDelay = maxDelayMs(settings);
  return maxDelay === undefined ? quiet : Math.min(quiet, firstAt + maxDelay);
}

/**
 * Whether an enqueue at `now` still belongs to a leading burst that started at `firstAt` and last
 * saw an enqueue at `lastAt`: less than a period since the last, and inside the maximum delay.
 */
export function leadingBurstOpen(
  firstAt: number,
  lastAt: number,
  now: number,
  settings: DebounceSettings,
): boolean {
  if (now >= lastAt + settings.periodSeconds * 1000) return false;
  const maxDelay = maxDelayMs(settings);
  return maxDelay === undefined || now < firstAt + maxDelay;
}
