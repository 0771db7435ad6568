import * as z from "zod";

/**
 * How deeply a client's JSON value (a payload, a schedule's payload) may nest: arrays and objects
 * inside each other. JSON.parse copes with any depth, but zod's z.json() and JSON.stringify recurse
 * and overflow the stack a few thousand levels down, which would be a 500 for the caller's mistake.
 */
export const MAX_JSON_DEPTH = 64;

type Path = (string | number)[];

/**
 * The path to the first container nested deeper than `max`, or undefined when the value stays within
 * it. Walks with an explicit stack, so it can't overflow itself; a cycle (a value built in code, not
 * parsed) counts as too deep rather than looping. It allocates only for the containers it meets,
 * never per element (no entries arrays, no [key, value] pairs): a few MB of `[0,0,…]` is a loop over
 * numbers, not millions of small arrays for the collector.
 */
export function tooDeepAt(value: unknown, max = MAX_JSON_DEPTH): Path | undefined {
  interface Step {
    value: unknown;
    depth: number;
    key: string | number;
    parent: Step | undefined;
  }
  const pathOf = (step: Step): Path => {
    const path: Path = [];
    for (let s: Step | undefined = step; s?.parent; s = s.parent) path.unshift(s.key);
    return path;
  };
  const pending: Step[] = [{ value, depth: 0, key: "", parent: undefined }];
  for (let step = pending.pop(); step; step = pending.pop()) {
    const v = step.value;
    if (v === null || typeof v !== "object") continue;
    const depth = step.depth + 1;
    if (depth > max) return pathOf(step);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (item !== null && typeof item === "object")
          pending.push({ value: item, depth, key: i, parent: step });
      }
      continue;
    }
    const record = v as Record<string, unknown>;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      if (item !== null && typeof item === "object") pending.push({ value: item, depth, key, parent: step });
    }
  }
  return undefined;
}

/** The issue a too-deep value gets, naming where it goes past the limit. */
export function depthIssueMessage(max = MAX_JSON_DEPTH): string {
  return `nested more than ${max} levels deep (arrays and objects inside each other); flatten it`;
}

/**
 * Any JSON value nested at most MAX_JSON_DEPTH deep. The depth is checked first, without recursion,
 * and aborts the parse, so z.json() (and any refinement after it) only ever sees a bounded value.
 * The one place client JSON gets its depth checked: the enqueue request and the schedule input use it.
 */
export const BoundedJson = z
  .unknown()
  .superRefine((value, ctx) => {
    const at = tooDeepAt(value);
    if (at) ctx.addIssue({ code: "custom", path: at, message: depthIssueMessage(), continue: false });
  })
  .pipe(z.json());
