import { describe, expect, it } from "vitest";
import { runScenarios, type Scenario } from "../../scripts/bench-all.ts";

/** `npm run bench`'s scenarios in turn: a failure costs its own figures, never another scenario's. */

class Refused extends Error {}

function output(tables = true) {
  const errors: string[] = [];
  return {
    errors,
    out: {
      tables,
      error: (line: string) => errors.push(line),
      isRefusal: (err: unknown) => err instanceof Refused,
    },
  };
}

describe("bench scenarios in turn", () => {
  it("a scenario that throws is printed and named in errors; the ones after it still run and report", async () => {
    const ran: string[] = [];
    const printed: string[] = [];
    const scenario = (name: string, figure: number): Scenario => [
      name,
      async () => {
        ran.push(name);
        return { json: { [name]: { figure } }, print: () => printed.push(name) };
      },
    ];
    const { errors, out } = output();
    const report = await runScenarios(
      [
        scenario("window", 1),
        [
          "batch",
          async () => {
            ran.push("batch");
            throw new Error("the backlog never drained");
          },
        ],
        scenario("debounce", 3),
      ],
      out,
    );
    expect(ran).toEqual(["window", "batch", "debounce"]);
    expect(printed).toEqual(["window", "debounce"]);
    expect(report.json).toEqual({ window: { figure: 1 }, debounce: { figure: 3 } });
    expect(report.errors).toEqual({ batch: "the backlog never drained" });
    expect(errors).toEqual(["bench: batch scenario FAILED: the backlog never drained"]);
    expect(report.exitCode).toBe(1);
  });

  it("a failure a scenario measured keeps its figures beside the error (a flood over its limit)", async () => {
    const { errors, out } = output(false);
    const report = await runScenarios(
      [
        [
          "flood",
          async () => ({
            json: { flood: { limitsKept: false } },
            failures: { flood: "over their limit: a 11 > 10" },
          }),
        ],
      ],
      out,
    );
    expect(report).toEqual({
      json: { flood: { limitsKept: false } },
      errors: { flood: "over their limit: a 11 > 10" },
      exitCode: 1,
    });
    expect(errors).toEqual(["bench: flood scenario FAILED: over their limit: a 11 > 10"]);
  });

  it("only the engine refusing the run as asked is exit 2 (bad usage); clean is 0 with no errors", async () => {
    const refused = await runScenarios(
      [
        [
          "window",
          async () => {
            throw new Refused("lane lean keeps no item");
          },
        ],
      ],
      output().out,
    );
    expect(refused).toEqual({ json: {}, errors: { window: "lane lean keeps no item" }, exitCode: 2 });
    const clean = await runScenarios([["batch", async () => ({ json: { batch: {} } })]], output(false).out);
    expect(clean).toEqual({ json: { batch: {} }, errors: {}, exitCode: 0 });
  });
});
