/**
 * How `npm run bench` runs its scenarios (scripts/bench.ts): in turn, each failure caught, printed
 * and recorded, so one broken scenario costs its own figures and no one else's. Pure of the stack:
 * the scenarios come in as functions, so a test can pass its own.
 */

/** What one scenario measured: its entries of the JSON line, its table, and what failed while measuring. */
export interface ScenarioOutcome {
  json: Record<string, unknown>;
  print?: () => void;
  /**
   * Failures found by a scenario that still measured (a flood key over its limit, a durable window
   * that timed out), by scenario name: the JSON keeps the figures, `errors` names the failure.
   */
  failures?: Record<string, string>;
}

export type Scenario = readonly [name: string, run: () => Promise<ScenarioOutcome>];

export interface ScenariosReport {
  /** Every scenario's entries, merged in the order they ran. */
  json: Record<string, unknown>;
  /** Scenario name → its error message; empty when all of them ran clean. */
  errors: Record<string, string>;
  /** 0 all ran, 2 only refusals (the engine refused the run as asked: bad usage), else 1. */
  exitCode: number;
}

export interface ScenarioOutput {
  /** Print the tables (false: only the JSON line, which the caller prints). */
  tables: boolean;
  error: (line: string) => void;
  /** An error the engine raised for the run as asked (the bench's EngineRefusal), not a broken bench. */
  isRefusal?: (err: unknown) => boolean;
}

export async function runScenarios(
  scenarios: readonly Scenario[],
  out: ScenarioOutput,
): Promise<ScenariosReport> {
  const json: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  let broken = false;
  const fail = (name: string, message: string) => {
    errors[name] = message;
    out.error(`bench: ${name} scenario FAILED: ${message}`);
  };
  for (const [name, run] of scenarios) {
    try {
      const outcome = await run();
      if (out.tables) outcome.print?.();
      Object.assign(json, outcome.json);
      for (const [failed, message] of Object.entries(outcome.failures ?? {})) {
        broken = true;
        fail(failed, message);
      }
    } catch (err) {
      if (!out.isRefusal?.(err)) broken = true;
      fail(name, err instanceof Error ? err.message : String(err));
    }
  }
  const exitCode = Object.keys(errors).length === 0 ? 0 : broken ? 1 : 2;
  return { json, errors, exitCode };
}
