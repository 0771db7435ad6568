import * as z from "zod";
import { ConfigError, issuesOf } from "../errors.ts";
import { onExhaustedChoices } from "../job/kind.ts";
import { MaxAttempts, TimeoutSeconds } from "../job/schemas.ts";
import { MAX_CHILDREN_PER_KIND, POOL_KIND_DEFAULTS, type PoolKindSpec } from "./pool-kind.ts";
import { type QueueDeclaration, tierOf } from "./queue-declaration.ts";

const KindOverride = z
  .object({
    argv: z.array(z.string().min(1)).min(1, "argv needs at least the program to run").optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    timeoutSeconds: TimeoutSeconds.optional(),
    soft: z.number().int().min(1).max(MAX_CHILDREN_PER_KIND).optional(),
    hard: z.number().int().min(1).max(MAX_CHILDREN_PER_KIND).optional(),
    queue: z.string().min(1).optional(),
    maxAttempts: MaxAttempts.optional(),
    onExhausted: z.enum(onExhaustedChoices).optional(),
  })
  .strict();

const KIND_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** The operator's file named by SKYFORGE_POOL_CONFIG: adds kinds or overrides declared ones. */
export interface PoolConfigFile {
  kinds: Record<string, z.infer<typeof KindOverride>>;
}

/** A pool configuration that cannot run; the message names the file's path and every problem. */
export class PoolConfigError extends ConfigError {
  override readonly name = "PoolConfigError";
}

/** What a check found: the usable part, and every problem (the caller throws them all at once). */
interface Checked<T> {
  value: T;
  problems: string[];
}

/** The file's text as kind overrides; each bad entry is a problem of its own, the good ones are kept. */
function checkFileText(text: string): Checked<PoolConfigFile["kinds"]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { value: {}, problems: [`not JSON (${(err as Error).message})`] };
  }
  const root = z
    .object({ kinds: z.record(z.string(), z.unknown()) })
    .strict()
    .safeParse(json);
  if (!root.success) {
    return { value: {}, problems: issuesOf(root.error).map((i) => `${i.path}: ${i.message}`) };
  }
  const kinds: PoolConfigFile["kinds"] = {};
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(root.data.kinds)) {
    const entry = KindOverride.safeParse(raw);
    if (!KIND_NAME.test(name))
      problems.push(`kinds.${name}: kind names are lowercase letters, digits and dashes`);
    if (!entry.success)
      problems.push(...issuesOf(entry.error, ["kinds", name]).map((i) => `${i.path}: ${i.message}`));
    else if (KIND_NAME.test(name)) kinds[name] = entry.data;
  }
  return { value: kinds, problems };
}

/** Parses the operator's file text; throws PoolConfigError with every problem listed. */
export function parsePoolConfig(text: string, source = "pool config"): PoolConfigFile {
  const { value, problems } = checkFileText(text);
  if (problems.length > 0) throw new PoolConfigError(`${source}: ${problems.join("; ")}`);
  return { kinds: value };
}

/** The app's pool kinds with the overrides laid over them, and what is wrong with the result. */
function resolve(
  queues: readonly QueueDeclaration[],
  declared: readonly PoolKindSpec[],
  overrides: PoolConfigFile["kinds"],
): Checked<PoolKindSpec[]> {
  const byName = new Map(declared.map((k) => [k.name, k]));
  const problems: string[] = [];
  // A kind the file adds without naming its queue feeds from the app's first pool-tier queue.
  const firstPoolQueue = queues.find((q) => tierOf(q) === "pool")?.name ?? "(no pool-tier queue)";
  for (const [name, o] of Object.entries(overrides)) {
    const base = byName.get(name) ?? { ...POOL_KIND_DEFAULTS, name, argv: [], queue: firstPoolQueue };
    if (!byName.has(name) && !o.argv) problems.push(`${name}: a new kind needs argv`);
    byName.set(name, { ...base, ...o, argv: o.argv ?? base.argv, env: { ...base.env, ...o.env } });
  }
  for (const k of byName.values()) {
    const queue = queues.find((q) => q.name === k.queue);
    if (!queue) problems.push(`${k.name}: queue "${k.queue}" is not declared`);
    else if (tierOf(queue) !== "pool")
      problems.push(`${k.name}: queue "${k.queue}" is served by Lambda, not the pool`);
    if (k.soft > k.hard) problems.push(`${k.name}: soft (${k.soft}) is above hard (${k.hard})`);
  }
  return { value: [...byName.values()], problems };
}

/**
 * The kinds the pool serves: the declared ones, with the file's entries laid over them field by
 * field (a file entry for a new name needs `argv`). Checked against the queue declarations: every
 * kind feeds from a pool-tier queue, and soft ≤ hard.
 */
export function resolvePoolKinds(
  queues: readonly QueueDeclaration[],
  declared: readonly PoolKindSpec[],
  file?: PoolConfigFile,
): PoolKindSpec[] {
  const { value, problems } = resolve(queues, declared, file?.kinds ?? {});
  if (problems.length > 0) throw new PoolConfigError(`pool kinds: ${problems.join("; ")}`);
  return value;
}

/**
 * The pool kinds for a deployment: the app's, with the operator's file at `path` (if any) laid over
 * them. Every problem of the file, whether of its form or of the kinds it makes, is reported in one
 * PoolConfigError that names the file. The caller passes the reader, so lib stays free of file I/O.
 */
export function loadPoolKinds(
  queues: readonly QueueDeclaration[],
  declared: readonly PoolKindSpec[],
  path: string | undefined,
  readText: (path: string) => string,
): PoolKindSpec[] {
  if (!path) return resolvePoolKinds(queues, declared);
  let text: string;
  try {
    text = readText(path);
  } catch (err) {
    throw new PoolConfigError(`${path}: cannot be read (${(err as Error).message})`);
  }
  const file = checkFileText(text);
  const kinds = resolve(queues, declared, file.value);
  const problems = [...file.problems, ...kinds.problems];
  if (problems.length > 0) {
    throw new PoolConfigError(`${path}: ${problems.length} problem(s): ${problems.join("; ")}`);
  }
  return kinds.value;
}
