import { createHash } from "node:crypto";
import { InvariantError } from "../errors.ts";
import type { KindDefinition } from "./kind.ts";

const derived = new WeakMap<object, string>();

/**
 * The version of a kind's code that a durable job records when its journal starts, and that a resume
 * compares (docs/guide/durable-jobs.md, "Versions"): the kind's declared `version`, else `src-` and
 * 12 hex digits of the SHA-256 of its handler's source text. Derived from the handler rather than a
 * build or deploy id: a deploy that leaves the kind's handler alone leaves its version alone, so its
 * suspended jobs are not paused or restarted for another kind's change; it needs no configuration,
 * locally or deployed; and what it misses (a change in a function the handler calls) the journal
 * checks still catch. The same source bundled two ways (tsx locally, esbuild for Lambda) may differ:
 * a kind that spans both, or wants its version in its own hands, declares it.
 */
export function kindVersionOf(kind: Pick<KindDefinition, "version" | "handler">): string {
  if (kind.version !== undefined) return kind.version;
  // A kind whose module loads on first use has no handler until then: hashing none would give every such kind one version.
  if (kind.handler === undefined)
    throw new InvariantError("a kind's version was read before its module loaded");
  const handler = kind.handler as unknown as object;
  let version = derived.get(handler);
  if (version === undefined) {
    const digest = createHash("sha256").update(String(kind.handler)).digest("hex");
    version = `src-${digest.slice(0, 12)}`;
    derived.set(handler, version);
  }
  return version;
}
