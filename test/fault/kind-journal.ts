import { existsSync, readFileSync } from "node:fs";
import type { FaultStack } from "./support.ts";

/**
 * The journal a fault scenario's kinds append to beside the observer log (one JSON line each, what
 * a handler did and when): the evidence for "each step's effect once" across a kill.
 */
export const kindJournalOf = (stack: FaultStack) => `${stack.logPath}.journal`;

/** Its complete lines so far (a line a killed process left half written is not one yet). */
export function readKindJournal<Line>(stack: FaultStack): Line[] {
  const path = kindJournalOf(stack);
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}
