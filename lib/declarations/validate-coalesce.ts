import {
  type DebounceSettings,
  debounceModes,
  MAX_DEBOUNCE_SECONDS,
  maxDelayMs,
  type SingletonSettings,
  singletonModes,
} from "../job/coalesce.ts";

/** What the validator reads of a kind's debounce or singleton (docs/architecture.md §19). */
export interface CoalesceDeclaration {
  debounce?: DebounceSettings<never>;
  singleton?: SingletonSettings<never>;
  lane?: string;
  batch?: unknown;
}

const positiveUpTo = (v: unknown, max: number): v is number =>
  typeof v === "number" && Number.isFinite(v) && v > 0 && v <= max;

/**
 * A debounce or singleton declaration's problems, each naming the kind and the field: one rule a
 * kind, on the fenced lane (its job's item is where later enqueues join it), never on a batch kind
 * (whose key already gathers its jobs), a known mode, a key function, and sound times.
 */
export function coalesceKindProblems(
  label: string,
  k: CoalesceDeclaration,
  queue: { name: string; maxReceiveCount: number } | undefined,
): string[] {
  const problems: string[] = [];
  const rule = k.debounce ? "debounce" : k.singleton ? "singleton" : undefined;
  if (!rule) return problems;
  if (k.debounce && k.singleton) problems.push(`${label}: declares both debounce and singleton; pick one`);
  if (k.batch !== undefined)
    problems.push(
      `${label}: a batch kind can't also declare ${rule} (its batch key already gathers its jobs)`,
    );
  if (k.lane !== undefined && k.lane !== "fenced")
    problems.push(
      `${label}: ${rule} needs the fenced lane (later enqueues join the job's item), not "${k.lane}"`,
    );
  const settings = (k.debounce ?? k.singleton) as { key?: unknown; mode?: unknown };
  if (typeof settings.key !== "function")
    problems.push(`${label}: ${rule}.key must be a function of the payload that returns the key`);
  const modes: readonly string[] = k.debounce ? debounceModes : singletonModes;
  if (!modes.includes(settings.mode as string))
    problems.push(`${label}: ${rule}.mode "${String(settings.mode)}" is not one of ${modes.join(", ")}`);
  if (k.debounce) {
    const { periodSeconds, maxDelaySeconds } = k.debounce;
    if (!positiveUpTo(periodSeconds, MAX_DEBOUNCE_SECONDS))
      problems.push(
        `${label}: debounce.periodSeconds must be over 0 and at most ${MAX_DEBOUNCE_SECONDS} (12 h), got ${periodSeconds}`,
      );
    if (maxDelaySeconds !== undefined) {
      if (!positiveUpTo(maxDelaySeconds, MAX_DEBOUNCE_SECONDS))
        problems.push(
          `${label}: debounce.maxDelaySeconds must be over 0 and at most ${MAX_DEBOUNCE_SECONDS} (12 h), got ${maxDelaySeconds}`,
        );
      else if (typeof periodSeconds === "number" && maxDelaySeconds < periodSeconds)
        problems.push(
          `${label}: debounce.maxDelaySeconds ${maxDelaySeconds} is below periodSeconds ${periodSeconds}; a burst would close before its first period`,
        );
    }
    problems.push(...burstReceiveProblems(label, k.debounce, queue));
  }
  return problems;
}

/**
 * A trailing or collect burst's message comes back about once a period until the burst closes,
 * each time a receive that counts toward the queue's maxReceiveCount: the bursts may take half of
 * it, so the job's own attempts keep the rest.
 */
function burstReceiveProblems(
  label: string,
  settings: DebounceSettings<never>,
  queue: { name: string; maxReceiveCount: number } | undefined,
): string[] {
  // A leading burst's job runs at once: its message never comes back early.
  if (settings.mode === "leading") return [];
  const maxDelay = maxDelayMs(settings as DebounceSettings);
  // A queue without a sound maxReceiveCount is refused by its own rule.
  if (!queue || !Number.isInteger(queue.maxReceiveCount) || queue.maxReceiveCount < 1) return [];
  if (maxDelay === undefined || !(settings.periodSeconds > 0)) return [];
  const looks = Math.ceil(maxDelay / (settings.periodSeconds * 1000));
  const room = Math.floor(queue.maxReceiveCount / 2);
  if (looks <= room) return [];
  return [
    `${label}: a burst's message may come back ${looks} times (maxDelay / period) before it runs, over half of queue "${queue.name}"'s maxReceiveCount ${queue.maxReceiveCount}; shorten debounce.maxDelaySeconds or raise maxReceiveCount`,
  ];
}
