import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { coldStartScenario } from "../../scripts/bench-scenarios.ts";
import { defaultRoot, deployedSdkOption } from "../../scripts/bundle-sizes.ts";
import { functionEnv } from "../../scripts/cold-start.ts";
import { generatedWorkers } from "../../scripts/cold-start-kinds.ts";

/**
 * `npm run bench -- --scenario cold-start --json` (issue 44): `coldStart` keeps its fields, and the
 * same interleaved run adds the peer (AWS's durable functions SDK), the worker's cold path and the
 * generated apps' workers. Run with one start each: only the shape is checked, never a timing.
 */
it("keeps coldStart and adds peer, workerColdPath and kinds, measured in the same run", async () => {
  const { json } = await coldStartScenario(1);
  const coldStart = json.coldStart as {
    function: string;
    importMs: number;
    sdkOnlyMs: number;
    ratio: number;
  }[];
  expect(coldStart.map((f) => f.function)).toContain("worker");
  for (const f of coldStart)
    expect(f).toEqual({
      function: expect.any(String),
      importMs: expect.any(Number),
      sdkOnlyMs: expect.any(Number),
      ratio: expect.any(Number),
    });
  const peer = json.peer as { importMs: number; firstUseMs: number; coldPathMs: number };
  expect(peer).toEqual({
    importMs: expect.any(Number),
    firstUseMs: expect.any(Number),
    coldPathMs: expect.any(Number),
    importCpuMs: expect.any(Number),
  });
  // The same starts' CPU time, function by function.
  const cpu = json.coldStartCpu as { function: string }[];
  expect(cpu.map((f) => f.function)).toEqual(coldStart.map((f) => f.function));
  for (const f of cpu)
    expect(f).toEqual({
      function: expect.any(String),
      importCpuMs: expect.any(Number),
      sdkOnlyCpuMs: expect.any(Number),
      ratio: expect.any(Number),
    });
  expect(peer.coldPathMs).toBeCloseTo(peer.importMs + peer.firstUseMs, 0);
  const worker = json.workerColdPath as Record<string, unknown>;
  expect(worker).toEqual({
    kind: "echo",
    importMs: coldStart.find((f) => f.function === "worker")?.importMs,
    firstJobMs: expect.any(Number),
    coldPathMs: expect.any(Number),
    withinPeer: expect.any(Boolean),
  });
  const kinds = json.kinds as {
    declared: string;
    kinds: number;
    importMs: number;
    firstJobMs: number;
    ratio: number;
  }[];
  expect(kinds.map((k) => [k.declared, k.kinds])).toEqual([
    ["lazy", 2],
    ["lazy", 50],
    ["whole", 2],
    ["whole", 50],
  ]);
  for (const k of kinds) {
    expect(k).toEqual({
      declared: expect.any(String),
      kinds: expect.any(Number),
      importMs: expect.any(Number),
      importCpuMs: expect.any(Number),
      firstJobMs: expect.any(Number),
      ratio: expect.any(Number),
    });
    expect(k.ratio).toBeCloseTo(
      k.importMs / (kinds.find((f) => f.declared === k.declared && f.kinds === 2)?.importMs ?? Number.NaN),
      1,
    );
  }
}, 600_000);

it("the generated apps' workers start, their lazy kinds without schema or handler until loaded, the others whole", async () => {
  const dir = join(defaultRoot, "node_modules", ".cache", `skyforge-cold-kinds-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const workers = await generatedWorkers(defaultRoot, dir, deployedSdkOption);
    const env = { PATH: process.env.PATH ?? "", ...functionEnv() };
    for (const w of workers) {
      const check = `const { app } = await import(${JSON.stringify(w.file)});
const kinds = app.kinds;
const loaded = kinds.filter((k) => k.handler !== undefined).length;
await Promise.all(kinds.map(async (k) => { if (k.load) Object.assign(k, (await k.load()).default); }));
console.log(JSON.stringify({ count: kinds.length, loaded, fields: Object.keys(kinds[0].payload.shape).length }));`;
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", check], {
        env,
        encoding: "utf8",
        cwd: dir,
      });
      expect(run.status, run.stderr.slice(-2000)).toBe(0);
      expect(JSON.parse(run.stdout), `${w.declared} ${w.count}`).toEqual({
        count: w.count,
        loaded: w.declared === "lazy" ? 0 : w.count,
        fields: 15,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
