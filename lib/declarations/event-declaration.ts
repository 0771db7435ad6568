import { UsageError } from "../errors.ts";

/**
 * An event name the app declares (docs/guide/durable-jobs.md, "Events are kept for a lookback"):
 * how long POST /events keeps an event of that name for a `waitForEvent` that begins after it.
 * Names the app doesn't declare keep theirs DEFAULT_LOOKBACK_SECONDS.
 */
export interface EventDeclaration {
  /** The event's name, as POST /events gives it. */
  name: string;
  /** 0..MAX_LOOKBACK_SECONDS; DEFAULT_LOOKBACK_SECONDS when left out. */
  lookbackSeconds?: number;
}

/** An event not declared is kept five minutes for the waits that begin after it. */
export const DEFAULT_LOOKBACK_SECONDS = 5 * 60;
/** The longest lookback: a day. Longer, and a buffered event is state: keep it in a step of your own. */
export const MAX_LOOKBACK_SECONDS = 86_400;

/** Why the declaration can't be, naming the call (`defineEvent("order.paid")`), or undefined. */
function eventDeclarationProblem(d: EventDeclaration): string | undefined {
  const call = `defineEvent(${JSON.stringify(d.name)})`;
  if (typeof d.name !== "string" || d.name.length === 0 || d.name.length > 256)
    return `${call}: the name must be 1..256 characters`;
  const s = d.lookbackSeconds;
  if (s !== undefined && !(Number.isInteger(s) && s >= 0 && s <= MAX_LOOKBACK_SECONDS))
    return `${call}: lookbackSeconds ${s} is outside 0..${MAX_LOOKBACK_SECONDS} (24 h)`;
  return undefined;
}

/** An event name's declaration, checked at once: a lookback over 24 h is a UsageError naming the call. */
export function defineEvent<const N extends string>(
  d: EventDeclaration & { name: N },
): EventDeclaration & { name: N } {
  const problem = eventDeclarationProblem(d);
  if (problem) throw new UsageError(problem);
  return d;
}

/** Every problem with an app's event declarations (those built without defineEvent too). */
export function eventDeclarationProblems(events: readonly EventDeclaration[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    if (seen.has(e.name)) problems.push(`event "${e.name}" is declared twice`);
    seen.add(e.name);
    const problem = eventDeclarationProblem(e);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** The lookback of each event name, in seconds. */
export function lookbackOf(events: readonly EventDeclaration[] | undefined): (event: string) => number {
  const declared = new Map(
    (events ?? []).map((e) => [e.name, e.lookbackSeconds ?? DEFAULT_LOOKBACK_SECONDS]),
  );
  return (event) => declared.get(event) ?? DEFAULT_LOOKBACK_SECONDS;
}
