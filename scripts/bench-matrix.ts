import { performance } from "node:perf_hooks";
import type { Lane } from "../bench/lanes.ts";
import type { MatrixRun, RunShape } from "./bench-args.ts";
import { DURATION_MODE, WARMUP } from "./bench-config.ts";
import {
  analyseWindow,
  EngineRefusal,
  measureWindow,
  shapeJson,
  startBenchStack,
  windowJson,
} from "./bench-window.ts";

/**
 * `npm run bench -- --matrix`: payload sizes × lanes, each cell its own stack and measured window
 * (no group scenario, no cold-start budget), as a markdown table of $/M jobs and one JSON line.
 */

/**
 * The payload sizes of the matrix: the table, from a small job to 200 KB (the payload limit
 * before the claim check), so each run is comparable with the last.
 */
export const MATRIX_PAYLOAD_SIZES = [256, 1024, 4096, 32 * 1024, 200 * 1024] as const;

type WindowJson = ReturnType<typeof windowJson>;
export type Cell =
  | { ok: true; json: WindowJson }
  | {
      ok: false;
      shape: RunShape;
      reason: string /** The engine refused it (n/a), not a failed run. */;
      refused: boolean;
    };

const sizeLabel = (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} B`);

async function runCell(shape: RunShape, jobs: number): Promise<Cell> {
  try {
    const bench = await startBenchStack(shape);
    try {
      return { ok: true, json: windowJson(analyseWindow(await measureWindow(bench, jobs)), shape) };
    } finally {
      await bench.stack.stop();
    }
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
    return { ok: false, shape, reason, refused: err instanceof EngineRefusal };
  }
}

/** The markdown table: $/M per lane, and the first lane's (fenced's) cost over its 256 B cost. */
export function matrixTable(
  sizes: readonly number[],
  lanes: readonly Lane[],
  cells: readonly Cell[],
): string {
  const at = (bytes: number, lane: Lane) =>
    cells.find(
      (c) => (c.ok ? c.json : c.shape).payloadBytes === bytes && (c.ok ? c.json : c.shape).lane === lane,
    );
  const reasons: string[] = [];
  const notes: string[] = [];
  const cost = (cell: Cell | undefined) => {
    if (cell?.ok) return `$${cell.json.usdPerMillionJobs.toFixed(4)}`;
    if (!cell) return "";
    let k = reasons.indexOf(cell.reason);
    if (k < 0) {
      k = reasons.push(cell.reason) - 1;
      notes.push(`[${k + 1}] ${cell.refused ? "refused by the engine" : "run failed"}: ${cell.reason}`);
    }
    return `n/a [${k + 1}]`;
  };
  const base = lanes.includes("fenced") ? "fenced" : (lanes[0] as Lane);
  const baseCost = (bytes: number) => {
    const c = at(bytes, base);
    return c?.ok ? c.json.usdPerMillionJobs : undefined;
  };
  const ratio = (bytes: number) => {
    const [x, b] = [baseCost(bytes), baseCost(256)];
    return x === undefined || b === undefined ? "n/a" : `${(x / b).toFixed(2)}×`;
  };
  const header = ["payload", ...lanes.map((l) => `${l} $/M`), `× the 256 B cost (${base})`];
  const lines = [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? " --- " : " ---: ")).join("|")}|`,
    ...sizes.map(
      (bytes) =>
        `| ${[sizeLabel(bytes), ...lanes.map((l) => cost(at(bytes, l))), ratio(bytes)].join(" | ")} |`,
    ),
  ];
  return [...lines, ...(notes.length > 0 ? ["", ...notes] : [])].join("\n");
}

/** Runs every cell, prints the table (unless --json) and the JSON line; result: whether every cell ran or was refused. */
export async function runMatrix(run: MatrixRun): Promise<boolean> {
  const sizes = MATRIX_PAYLOAD_SIZES;
  const cells: Cell[] = [];
  const total = sizes.length * run.lanes.length;
  for (const payloadBytes of sizes) {
    for (const lane of run.lanes) {
      const shape: RunShape = {
        kind: run.kind,
        lane,
        payloadBytes,
        unique: run.unique,
        failOnce: run.failOnce,
      };
      const t = performance.now();
      const cell = await runCell(shape, run.jobs);
      cells.push(cell);
      const what = cell.ok
        ? `$${cell.json.usdPerMillionJobs.toFixed(4)}/M, ${cell.json.jobsPerSecond} jobs/s`
        : `n/a (${cell.reason})`;
      const seconds = ((performance.now() - t) / 1000).toFixed(1);
      console.error(
        `matrix ${cells.length}/${total}: ${sizeLabel(payloadBytes)} ${lane}: ${what} (${seconds} s)`,
      );
    }
  }
  if (!run.json) {
    console.log(
      `skyforge bench --matrix: ${run.kind}, ${run.jobs} jobs per cell after a warm-up of ${WARMUP}, each cell on its own local stack; usdPerMillionJobs (${DURATION_MODE} Lambda durations)\n`,
    );
    console.log(matrixTable(sizes, run.lanes, cells));
  }
  console.log(
    JSON.stringify({
      matrix: {
        kind: run.kind,
        ...(run.unique ? { unique: true } : {}),
        ...(run.failOnce ? { failOnce: true } : {}),
        jobsPerCell: run.jobs,
        warmup: WARMUP,
        payloadBytes: sizes,
        lanes: run.lanes,
      },
      cells: cells.map((c) =>
        c.ok ? c.json : { ...shapeJson(c.shape), error: { refused: c.refused, reason: c.reason } },
      ),
    }),
  );
  return cells.every((c) => c.ok || c.refused);
}
