import { describe, expect, test } from "vitest";
import {
  canTransition,
  indexedStatuses,
  isIndexed,
  isTerminal,
  type JobStatus,
  jobStatuses,
  terminalStatuses,
  transitions,
} from "../../lib/job/status.ts";

const all = [...jobStatuses];

describe("status transitions map", () => {
  test("has exactly one entry per status, and every edge targets a known status", () => {
    expect(Object.keys(transitions).sort()).toEqual([...all].sort());
    for (const from of all) {
      for (const to of transitions[from]) expect(all).toContain(to);
      expect(new Set(transitions[from]).size).toBe(transitions[from].length);
    }
  });

  test("canTransition agrees with the map for every pair", () => {
    for (const from of all) {
      for (const to of all) expect(canTransition(from, to)).toBe(transitions[from].includes(to));
    }
  });

  test("done is final; dead and cancelled only leave through a redrive (→ scheduled)", () => {
    expect(transitions.done).toEqual([]);
    expect(transitions.dead).toEqual(["scheduled"]);
    expect(transitions.cancelled).toEqual(["scheduled"]);
  });

  test("a claim can start from queued, scheduled (due) and running (takeover), never from a terminal state", () => {
    for (const from of ["queued", "scheduled", "running"] as const)
      expect(canTransition(from, "running")).toBe(true);
    for (const from of terminalStatuses) expect(canTransition(from, "running")).toBe(false);
  });

  test("every finalize outcome is an edge out of running", () => {
    // retry/throttled → queued, reschedule → scheduled, done, dead, cancelled, paused
    for (const to of ["queued", "scheduled", "done", "dead", "cancelled", "paused"] as const) {
      expect(canTransition("running", to)).toBe(true);
    }
  });

  test("only running may loop onto itself (a takeover)", () => {
    for (const s of all) expect(canTransition(s, s)).toBe(s === "running");
  });

  test("a user cancel reaches queued and scheduled directly", () => {
    expect(canTransition("queued", "cancelled")).toBe(true);
    expect(canTransition("scheduled", "cancelled")).toBe(true);
    expect(canTransition("done", "cancelled")).toBe(false);
  });

  test("paused is not terminal: only a running job pauses, and it leaves by a resume or a cancel", () => {
    expect(isTerminal("paused")).toBe(false);
    expect(isIndexed("paused")).toBe(true);
    for (const from of all) expect(canTransition(from, "paused")).toBe(from === "running");
    expect(transitions.paused).toEqual(["scheduled", "cancelled"]);
    // Never straight back to running: a resume goes through scheduled (the redrive's path).
    expect(canTransition("paused", "running")).toBe(false);
  });

  test("every status can reach a terminal one", () => {
    for (const start of all) {
      const seen = new Set<JobStatus>([start]);
      const todo: JobStatus[] = [start];
      while (todo.length) {
        const s = todo.pop() as JobStatus;
        for (const n of transitions[s]) {
          if (!seen.has(n)) {
            seen.add(n);
            todo.push(n);
          }
        }
      }
      expect(terminalStatuses.some((t) => seen.has(t))).toBe(true);
    }
  });

  test("isTerminal / isIndexed classify the statuses", () => {
    expect(all.filter(isTerminal).sort()).toEqual(["cancelled", "dead", "done"]);
    expect(all.filter(isIndexed).sort()).toEqual([...indexedStatuses].sort());
    expect(isIndexed("queued")).toBe(false);
    expect(isIndexed("running")).toBe(false);
  });
});
