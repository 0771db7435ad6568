import { UsageError } from "../errors.ts";
import { stepNameProblem } from "../job/durable.ts";
import {
  jobTopic,
  MAX_STREAM_CHUNK_BYTES,
  type StreamEvent,
  type StreamWriter,
} from "../job/realtime-wire.ts";
import { errorFields } from "../observability/log.ts";
import type { JobItem } from "../store/job-item.ts";
import { putStreamChunk, type StoredChunk } from "../store/stream-chunk-ops.ts";
import type { RealtimeDeps } from "./realtime-deps.ts";

/** How long chunks are kept for a replay: at least a day (docs/architecture.md §25). */
export const STREAM_RETENTION_SECONDS = 24 * 60 * 60;

/**
 * `ctx.stream(name)` for one run. A chunk's place (its sequence number) is its position among this
 * run's writes to the stream, so a durable job's replay, which writes the same chunks again before
 * it reaches new code, finds their places taken and neither stores nor publishes them twice.
 */
export function streamWriter(deps: RealtimeDeps, job: JobItem, name: string): StreamWriter {
  const problem = stepNameProblem(name);
  if (problem) throw new UsageError(`ctx.stream: ${problem.replace("step name", "stream name")}`);
  let seq = 0;
  let closed = false;
  const put = async (fields: Pick<StoredChunk, "chunk" | "closed">) => {
    if (closed) throw new UsageError(`ctx.stream("${name}") is closed: it takes no more writes`);
    seq += 1;
    rememberPosition(deps.positions, job.id, name, seq);
    const at = deps.clock.now();
    const stored: StoredChunk = { stream: name, seq, at, ...fields };
    const expiresAt = Math.ceil(at / 1000) + STREAM_RETENTION_SECONDS;
    // Kept for replays first; a store that fails costs the replay of this chunk, never the run.
    const fresh = await putStreamChunk(deps.store, job.id, stored, expiresAt).catch((error: unknown) => {
      deps.metrics.count("realtimeDropped", job.queue, job.kind);
      deps.log.warn("could not keep a stream chunk for replays", { jobId: job.id, ...errorFields(error) });
      return true;
    });
    if (!fresh) return;
    const event: StreamEvent = {
      type: "stream",
      jobId: job.id,
      stream: name,
      seq,
      at,
      ...(fields.chunk !== undefined ? { chunk: JSON.parse(fields.chunk) as unknown } : {}),
      ...(fields.closed ? { closed: true } : {}),
    };
    deps.queue.send(jobTopic(deps.prefix, job.id), JSON.stringify(event), job);
  };
  return {
    write: async (chunk) => {
      const json = chunkJson(name, chunk);
      await put({ chunk: json });
    },
    close: async () => {
      if (closed) return;
      await put({ closed: true });
      closed = true;
    },
  };
}

function chunkJson(name: string, chunk: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(chunk);
  } catch (err) {
    throw new UsageError(`ctx.stream("${name}").write: a chunk JSON can't hold (${String(err)})`);
  }
  if (json === undefined)
    throw new UsageError(`ctx.stream("${name}").write: a chunk must be a string or JSON`);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_STREAM_CHUNK_BYTES)
    throw new UsageError(
      `ctx.stream("${name}").write: a chunk is ${bytes} bytes once serialized, over ${MAX_STREAM_CHUNK_BYTES} (32 KiB)`,
    );
  return json;
}

/**
 * The runs whose streams' last numbers this process keeps, for their `ended` event. A run that ends
 * elsewhere (its lease lost here) is never removed by its end: past this many, the oldest goes,
 * which costs its subscribers a replay at the end, never a chunk.
 */
export const MAX_STREAM_POSITIONS = 10_000;

export function rememberPosition(
  positions: Map<string, Record<string, number>>,
  jobId: string,
  stream: string,
  seq: number,
): void {
  const known = positions.get(jobId);
  // Re-inserted, so the oldest key is the run that wrote longest ago.
  positions.delete(jobId);
  positions.set(jobId, { ...known, [stream]: seq });
  if (positions.size > MAX_STREAM_POSITIONS) positions.delete(positions.keys().next().value as string);
}
