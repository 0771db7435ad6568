import { onVersionChangeChoices } from "../job/kind.ts";

/** A kind's version rides in its jobs' items and in GET /jobs?waiting=true's counts: short and printable. */
export const MAX_VERSION_CHARS = 64;
const PRINTABLE = /^[\x21-\x7e]+$/;

/** A kind's `version` and `onVersionChange` problems, each naming the kind (docs/guide/durable-jobs.md, "Versions"). */
export function versionProblems(
  label: string,
  k: { version?: unknown; onVersionChange?: unknown },
): string[] {
  const problems: string[] = [];
  const { version, onVersionChange } = k;
  if (
    version !== undefined &&
    (typeof version !== "string" || version.length > MAX_VERSION_CHARS || !PRINTABLE.test(version))
  )
    problems.push(
      `${label}: version must be 1..${MAX_VERSION_CHARS} printable ASCII characters without spaces, got ${JSON.stringify(version)}`,
    );
  if (
    onVersionChange !== undefined &&
    !(onVersionChangeChoices as readonly unknown[]).includes(onVersionChange)
  )
    problems.push(
      `${label}: onVersionChange "${String(onVersionChange)}" is not one of ${onVersionChangeChoices.join(", ")}`,
    );
  // A derived version is a hash of the handler as bundled: a minifier may rename inside it when only
  // other code changed, which must not pause or restart a kind's suspended jobs.
  if ((onVersionChange === "pause" || onVersionChange === "restart") && version === undefined)
    problems.push(
      `${label}: onVersionChange "${onVersionChange}" needs a declared version (the derived one, a hash of the handler as bundled, can change with a build that left the handler alone)`,
    );
  return problems;
}
