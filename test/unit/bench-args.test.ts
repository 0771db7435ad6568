import { describe, expect, it } from "vitest";
import { MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import {
  ALL_SCENARIOS,
  type ArgsContext,
  DEFAULT_HEAT_JOBS,
  DEFAULT_JOBS,
  DEFAULT_MATRIX_JOBS,
  DEFAULT_PAYLOAD_BYTES,
  HEAT_GROUP_CHILDREN,
  MIN_PAYLOAD_BYTES,
  parseBenchArgs,
  usage,
} from "../../scripts/bench-args.ts";

const context = (env: Record<string, string> = {}): ArgsContext => ({
  env,
  kinds: ["echo", "sleep", "flaky", "bench-noop"],
  poolKinds: ["py-digest"],
});
const parse = (argv: string[], env: Record<string, string> = {}) => parseBenchArgs(argv, context(env));
const errorOf = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parse(argv, env);
  if (parsed.mode !== "error") throw new Error(`expected a usage error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
};

describe("bench args: what a bare run and --scenario all run", () => {
  const all = {
    mode: "all",
    jobs: DEFAULT_JOBS,
    payloadBytes: DEFAULT_PAYLOAD_BYTES,
    kind: "echo",
    lane: "fenced",
    unique: false,
    failOnce: false,
    json: false,
  };

  it("no flags, or --scenario all: every scenario, the window at its defaults (2000 echo jobs of 256 bytes)", () => {
    expect(parse([])).toEqual(all);
    expect(parse(["--scenario", "all"])).toEqual(all);
    expect(parse(["--json"])).toEqual({ ...all, json: true });
    expect(parse(["--scenario=all", "--json"], { BENCH_JOBS: "300" })).toEqual({
      ...all,
      jobs: 300,
      json: true,
    });
    expect([DEFAULT_JOBS, DEFAULT_PAYLOAD_BYTES]).toEqual([2000, 256]);
  });

  it("every scenario but the scale model, the window first and the cold start last (no stack up)", () => {
    expect(ALL_SCENARIOS).toEqual([
      "window",
      "group",
      "batch",
      "redelivery",
      "debounce",
      "durable",
      "flood",
      "cold-start",
    ]);
    for (const name of ALL_SCENARIOS) expect(usage).toContain(`--scenario ${name}`);
  });

  it("--scenario all takes no window flag: it measures the defaults", () => {
    for (const flag of [["--jobs", "10"], ["--payload-bytes", "64"], ["--kind", "echo"], ["--matrix"]])
      expect(errorOf(["--scenario", "all", ...flag]), flag[0]).toBe(
        `--scenario all runs every scenario at its defaults; leave out ${flag[0]}`,
      );
  });
});

describe("bench args: the single window alone", () => {
  it("any window flag without --scenario: that window alone, the rest at their defaults", () => {
    const single = { ...parse([]), mode: "single" };
    expect(parse(["--payload-bytes", "204800", "--json"])).toEqual({
      ...single,
      payloadBytes: 204_800,
      json: true,
    });
    expect(parse(["--jobs", "20"])).toEqual({ ...single, jobs: 20 });
    expect(parse(["--unique"])).toEqual({ ...single, unique: true });
    expect(parse(["--scenario", "window"])).toEqual(single);
    expect(parse(["--scenario", "window", "--lane", "lean"])).toEqual({ ...single, lane: "lean" });
  });

  it("every flag, in either spelling of a value", () => {
    expect(
      parse([
        "--jobs",
        "300",
        "--payload-bytes=4096",
        "--kind",
        "sleep",
        "--lane",
        "at-least-once",
        "--unique",
        "--fail-once",
        "--json",
      ]),
    ).toEqual({
      mode: "single",
      jobs: 300,
      payloadBytes: 4096,
      kind: "sleep",
      lane: "at-least-once",
      unique: true,
      failOnce: true,
      json: true,
    });
  });

  it("BENCH_JOBS is the fallback for --jobs; the flag wins, even over a bad value", () => {
    expect(parse([], { BENCH_JOBS: "500" })).toMatchObject({ jobs: 500 });
    expect(parse([], { BENCH_JOBS: "" })).toMatchObject({ jobs: DEFAULT_JOBS });
    expect(parse(["--jobs", "20"], { BENCH_JOBS: "500" })).toMatchObject({ jobs: 20 });
    expect(parse(["--jobs", "20"], { BENCH_JOBS: "lots" })).toMatchObject({ jobs: 20 });
    expect(errorOf([], { BENCH_JOBS: "lots" })).toBe('BENCH_JOBS must be a whole number ≥ 1, got "lots"');
  });

  it("payload sizes from the smallest the bench can build to the engine's limit", () => {
    expect(parse(["--payload-bytes", String(MIN_PAYLOAD_BYTES)])).toMatchObject({
      payloadBytes: MIN_PAYLOAD_BYTES,
    });
    expect(parse(["--payload-bytes", String(MAX_PAYLOAD_BYTES)])).toMatchObject({
      payloadBytes: MAX_PAYLOAD_BYTES,
    });
    for (const bad of [String(MIN_PAYLOAD_BYTES - 1), String(MAX_PAYLOAD_BYTES + 1), "4k", "1e3", "2.5", ""])
      expect(errorOf(["--payload-bytes", bad]), bad).toMatch(
        /^--payload-bytes must be a whole number from 32 to/,
      );
  });

  it("refuses bad numbers, lanes and kinds with messages that name them", () => {
    for (const bad of ["0", "-5", "ten", "1.5"]) expect(errorOf([`--jobs=${bad}`]), bad).toMatch(/--jobs/);
    expect(errorOf(["--lane", "slow"])).toBe(
      '--lane must be one of fenced, lean, at-least-once, fire-and-forget; got "slow"',
    );
    expect(errorOf(["--kind", "py-digest"])).toMatch(/^--kind py-digest: "py-digest" is a pool kind/);
    expect(errorOf(["--kind", "py-digest"])).toMatch(/kinds: echo, sleep, flaky, bench-noop/);
    expect(errorOf(["--kind", "nope"])).toBe(
      "--kind nope: the app has no such kind (kinds: echo, sleep, flaky, bench-noop)",
    );
  });

  it("refuses unknown flags, missing values, positionals and matrix-only flags", () => {
    expect(errorOf(["--job", "5"])).toMatch(/Unknown option '--job'/);
    expect(errorOf(["--jobs"])).toMatch(/--jobs/);
    expect(errorOf(["--json=yes"])).toMatch(/--json/);
    expect(errorOf(["fast"])).toMatch(/'fast'/);
    expect(errorOf(["--lanes", "lean"])).toBe("--lanes is for --matrix; a single run takes --lane");
  });

  it("--help and -h ask for the usage, which lists every flag", () => {
    expect(parse(["--help"])).toEqual({ mode: "help" });
    expect(parse(["-h", "--jobs", "1"])).toEqual({ mode: "help" });
    for (const flag of [
      "--jobs",
      "--payload-bytes",
      "--kind",
      "--lane",
      "--unique",
      "--fail-once",
      "--json",
      "--matrix",
      "--lanes",
    ])
      expect(usage).toContain(flag);
  });
});

describe("bench args: the matrix", () => {
  it("defaults: every lane, 300 jobs per cell, the no-op kind, BENCH_JOBS not read", () => {
    expect(parse(["--matrix"], { BENCH_JOBS: "5000" })).toEqual({
      mode: "matrix",
      jobs: DEFAULT_MATRIX_JOBS,
      lanes: ["fenced", "lean", "at-least-once", "fire-and-forget"],
      kind: "bench-noop",
      unique: false,
      failOnce: false,
      json: false,
    });
  });

  it("--lanes picks lanes in the order given; --jobs and the run flags apply to every cell", () => {
    expect(parse(["--matrix", "--lanes", "lean,fenced", "--jobs", "50", "--unique", "--json"])).toMatchObject(
      {
        mode: "matrix",
        lanes: ["lean", "fenced"],
        jobs: 50,
        unique: true,
        json: true,
      },
    );
  });

  it("refuses a bad or repeated lane, and the single run's --payload-bytes and --lane", () => {
    expect(errorOf(["--matrix", "--lanes", "fenced,quick"])).toMatch(/--lanes must be one of .*got "quick"/);
    expect(errorOf(["--matrix", "--lanes", "fenced,,lean"])).toMatch(/got ""/);
    expect(errorOf(["--matrix", "--lanes", "lean,lean"])).toMatch(/names a lane twice/);
    expect(errorOf(["--matrix", "--payload-bytes", "256"])).toMatch(/leave out --payload-bytes/);
    expect(errorOf(["--matrix", "--lane", "lean"])).toMatch(/leave out --lane/);
    expect(errorOf(["--matrix", "--kind", "py-digest"])).toMatch(/is a pool kind/);
  });
});

describe("bench args: the scale model", () => {
  it("--scenario heat: 1 000 jobs a scenario, a 10 000-child group, projected to 10 000 jobs/s unless told", () => {
    expect(parse(["--scenario", "heat"])).toEqual({
      mode: "heat",
      jobs: DEFAULT_HEAT_JOBS,
      groupChildren: HEAT_GROUP_CHILDREN,
      targetJobsPerSecond: 10_000,
      json: false,
    });
    expect(parse(["--scenario=heat", "--target-rate", "2500.5", "--jobs", "200", "--json"])).toMatchObject({
      jobs: 200,
      targetJobsPerSecond: 2500.5,
      json: true,
    });
  });

  it("refuses a target rate of zero or below or not a number, another scenario, and flags of other runs", () => {
    // The = form: parseArgs would take "-1" after a space for a flag of its own.
    for (const bad of ["0", "-1", "ten", "", "Infinity"])
      expect(errorOf(["--scenario", "heat", `--target-rate=${bad}`]), bad).toBe(
        `--target-rate must be a number of jobs a second above 0, got "${bad}"`,
      );
    expect(errorOf(["--scenario", "cold"])).toBe(
      '--scenario must be one of all, window, group, batch, redelivery, debounce, durable, flood, cold-start, heat, realtime, limits, search, priorities, got "cold"',
    );
    expect(errorOf(["--target-rate", "100"])).toBe("--target-rate is for --scenario heat");
    expect(errorOf(["--scenario", "heat", "--kind", "echo"])).toBe(
      "--scenario heat runs its own mix; leave out --kind",
    );
    expect(errorOf(["--scenario", "heat", "--matrix"])).toMatch(/leave out --matrix/);
  });
});

describe("bench args: the debounce scenario alone", () => {
  it("--scenario debounce: its fixed shape, table and JSON unless --json", () => {
    expect(parse(["--scenario", "debounce"])).toEqual({ mode: "debounce", json: false });
    expect(parse(["--scenario=debounce", "--json"])).toEqual({ mode: "debounce", json: true });
    expect(usage).toContain("--scenario debounce");
  });

  it("refuses every other flag, naming it", () => {
    for (const flag of [
      ["--jobs", "10"],
      ["--kind", "echo"],
      ["--lane", "lean"],
      ["--payload-bytes", "64"],
      ["--unique"],
      ["--fail-once"],
      ["--matrix"],
      ["--lanes", "lean"],
      ["--target-rate", "5"],
    ])
      expect(errorOf(["--scenario", "debounce", ...flag]), flag[0]).toBe(
        `--scenario debounce runs its own fixed shape; leave out ${flag[0]}`,
      );
  });
});

describe("bench args: the flood scenario alone", () => {
  it("--scenario flood: its fixed shape, table and JSON unless --json", () => {
    expect(parse(["--scenario", "flood"])).toEqual({ mode: "flood", json: false });
    expect(parse(["--scenario=flood", "--json"])).toEqual({ mode: "flood", json: true });
    expect(usage).toContain("--scenario flood");
  });

  it("BENCH_JOBS is not read: the flood's size is its own", () => {
    expect(parse(["--scenario", "flood"], { BENCH_JOBS: "lots" })).toEqual({ mode: "flood", json: false });
  });

  it("refuses every other flag, naming it", () => {
    for (const flag of [
      ["--jobs", "10"],
      ["--kind", "echo"],
      ["--lane", "lean"],
      ["--payload-bytes", "64"],
      ["--unique"],
      ["--fail-once"],
      ["--matrix"],
      ["--lanes", "lean"],
      ["--target-rate", "5"],
    ])
      expect(errorOf(["--scenario", "flood", ...flag]), flag[0]).toBe(
        `--scenario flood runs its own fixed shape; leave out ${flag[0]}`,
      );
  });

  it("a misspelt scenario name is refused with the list", () => {
    expect(errorOf(["--scenario", "floods"])).toBe(
      '--scenario must be one of all, window, group, batch, redelivery, debounce, durable, flood, cold-start, heat, realtime, limits, search, priorities, got "floods"',
    );
  });
});

describe("bench args: the durable scenario alone", () => {
  it("--scenario durable: its fixed shape (BENCH_DURABLE_JOBS, not BENCH_JOBS), table and JSON unless --json", () => {
    expect(parse(["--scenario", "durable"])).toEqual({ mode: "durable", json: false });
    expect(parse(["--scenario=durable", "--json"], { BENCH_JOBS: "lots" })).toEqual({
      mode: "durable",
      json: true,
    });
    expect(usage).toContain("--scenario durable");
    expect(usage).toContain("BENCH_DURABLE_JOBS");
  });

  it("refuses every other flag, naming it", () => {
    for (const flag of [["--jobs", "10"], ["--kind", "echo"], ["--matrix"], ["--target-rate", "5"]])
      expect(errorOf(["--scenario", "durable", ...flag]), flag[0]).toBe(
        `--scenario durable runs its own fixed shape; leave out ${flag[0]}`,
      );
  });
});

describe("bench args: the group scenario alone", () => {
  it("--scenario group: the window's flags shape the children and the plain job they are priced beside", () => {
    expect(parse(["--scenario", "group", "--payload-bytes", "1024", "--jobs", "100"])).toEqual({
      mode: "group",
      jobs: 100,
      payloadBytes: 1024,
      kind: "echo",
      lane: "fenced",
      unique: false,
      failOnce: false,
      json: false,
    });
    expect(errorOf(["--scenario", "group", "--matrix"])).toBe(
      "--scenario group measures no matrix; leave out --matrix",
    );
    expect(errorOf(["--scenario", "group", "--target-rate", "5"])).toBe(
      "--target-rate is for --scenario heat",
    );
  });
});

describe("bench args: the other scenarios alone, each of a fixed shape", () => {
  it("batch, redelivery, cold-start, realtime and limits take only --json, like debounce, durable and flood", () => {
    for (const name of ["batch", "redelivery", "cold-start", "realtime", "limits"]) {
      expect(parse(["--scenario", name])).toEqual({ mode: name, json: false });
      expect(parse([`--scenario=${name}`, "--json"])).toEqual({ mode: name, json: true });
      expect(errorOf(["--scenario", name, "--jobs", "10"])).toBe(
        `--scenario ${name} runs its own fixed shape; leave out --jobs`,
      );
    }
  });
});
