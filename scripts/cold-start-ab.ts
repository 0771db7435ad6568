import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { functionEnv, median } from "./cold-start.ts";

/**
 * A lever's effect on a cold import (docs/guide/performance.md "Cold start"): fresh `node` starts of
 * two or more files, interleaved round by round (the order rotated, a first round unmeasured), with
 * the functions' environment (scripts/cold-start.ts), each one's wall time from spawn to exit and
 * its CPU time (user + system, reported by the process at exit). A subject is `label=file`, or
 * `label=file@NAME=value` to start it with one more environment variable (NODE_COMPILE_CACHE).
 *
 * `npx tsx scripts/cold-start-ab.ts --runs 15 before=a.mjs after=b.mjs`
 */

const CPU_AT_EXIT = `data:text/javascript,${encodeURIComponent(
  'process.on("exit", () => { const u = process.cpuUsage(); process.stderr.write("\\ncpu-ms " + (u.user + u.system) / 1000 + "\\n"); });',
)}`;

interface Subject {
  label: string;
  file: string;
  env: Record<string, string>;
}

export function parseSubject(arg: string): Subject {
  const [label, rest] = arg.split(/=(.*)/s) as [string, string | undefined];
  if (!rest) throw new Error(`a subject is label=file[@NAME=value], got "${arg}"`);
  const [file, extra] = rest.split("@") as [string, string | undefined];
  const env: Record<string, string> = {};
  if (extra) {
    const [name, value] = extra.split(/=(.*)/s) as [string, string | undefined];
    env[name] = value ?? "";
  }
  return { label, file, env };
}

export function compareStarts(subjects: Subject[], runs: number, node = process.execPath) {
  const base = { PATH: process.env.PATH ?? "", ...functionEnv() };
  const wall: number[][] = subjects.map(() => []);
  const cpu: number[][] = subjects.map(() => []);
  for (let round = -1; round < runs; round++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + Math.max(round, 0)) % subjects.length;
      const s = subjects[i] as Subject;
      const start = performance.now();
      const run = spawnSync(node, ["--import", CPU_AT_EXIT, s.file], {
        env: { ...base, ...s.env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      const ms = performance.now() - start;
      const stderr = run.stderr.toString();
      if (run.status !== 0) throw new Error(`${s.label} exited with ${run.status}: ${stderr}`);
      if (round < 0) continue;
      wall[i]?.push(ms);
      cpu[i]?.push(Number(/^cpu-ms (\S+)$/m.exec(stderr)?.[1]));
    }
  }
  return subjects.map((s, i) => ({
    label: s.label,
    wallMs: median(wall[i] ?? []),
    cpuMs: median(cpu[i] ?? []),
  }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals } = parseArgs({
    options: { runs: { type: "string", default: "15" } },
    allowPositionals: true,
  });
  const results = compareStarts(positionals.map(parseSubject), Number(values.runs));
  console.log(`medians of ${values.runs} fresh processes each, interleaved`);
  for (const r of results)
    console.log(
      `${r.label.padEnd(24)} wall ${r.wallMs.toFixed(1).padStart(6)} ms  CPU ${r.cpuMs.toFixed(1).padStart(6)} ms`,
    );
}
