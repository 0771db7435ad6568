import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type ReplayOutcome, replayFixture } from "../../lib/durable/fixture-replay.ts";
import { openUnder } from "../../lib/durable/versions.ts";
import { type JournalFixture, parseJournalFixture } from "../../lib/job/journal-fixture.ts";
import type { KindDefinition } from "../../lib/job/kind.ts";
import { kindVersionOf } from "../../lib/job/kind-version.ts";
import { loadAppModule } from "../../project/app-module.ts";

/**
 * check-deploy's look at durable kinds with suspended runs (docs/guide/durable-jobs.md, "Changing a
 * durable kind safely"): each recorded journal fixture under the project's `durable-fixtures/`
 * (written by `skyforge durable fixture <jobId>`) is replayed offline against its kind's handler as
 * the code now stands (lib/durable/fixture-replay.ts). What a deploy would do to such jobs is a
 * WARNING, never a failure: the fixture is one job's journal, the stage's jobs may differ. A file
 * that is not a fixture fails the check (it would otherwise hide every later warning).
 */

/** Where a project keeps its fixtures: `durable-fixtures/<kind>/<name>.json`. */
export const FIXTURES_DIR = "durable-fixtures";

export interface FixtureFinding {
  /** The fixture's path, relative to the project. */
  file: string;
  level: "warning" | "note" | "fail";
  text: string;
}

function fixtureFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".json"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** What the kind's onVersionChange does to a job of the fixture's version when it resumes under this code. */
function versionEffect(kind: KindDefinition, fixture: JournalFixture): { changed: boolean; text: string } {
  const now = kindVersionOf(kind);
  const opening = openUnder(
    { id: fixture.jobId, kind: kind.name, steps: {}, version: fixture.version },
    kind,
  );
  if (fixture.version === undefined || fixture.version === now)
    return { changed: false, text: `the version ("${now}") is the same: onVersionChange does not apply` };
  const versions = `version "${fixture.version}" -> "${now}", onVersionChange "${kind.onVersionChange ?? "continue"}"`;
  if (opening.as === "refused")
    return { changed: true, text: `${versions}: such jobs pause when they resume, before any replay` };
  if (opening.as === "restart")
    return {
      changed: true,
      text: `${versions}: such jobs start over under this code, their recorded steps run again`,
    };
  return { changed: true, text: `${versions}: such jobs replay their records under this code` };
}

/** The finding of one replay; undefined when the fixture replays as recorded under the same version. */
function findingOf(
  kind: KindDefinition,
  fixture: JournalFixture,
  out: ReplayOutcome,
): Omit<FixtureFinding, "file"> | undefined {
  const at = `kind ${kind.name}`;
  const effect = versionEffect(kind, fixture);
  switch (out.as) {
    case "diverged":
      return {
        level: "warning",
        text: `${at}: step "${out.error.step}" ${out.error.change}; ${effect.text}, and a suspended job that replays meets NonDeterminismError there and is paused`,
      };
    case "misuse":
      return {
        level: "warning",
        text: `${at}: its replay ends in DurableMisuseError (${out.error.message}), which ends a job dead; ${effect.text}`,
      };
    case "payload":
      return {
        level: "warning",
        text: `${at}: the recorded payload fails the kind's schema now (${out.problem}); ${effect.text}`,
      };
    case "unsettled":
      return {
        level: "warning",
        text: `${at}: the handler neither ended nor reached a durable call within ${out.boundMs} ms of its replay (it awaits something outside its steps)`,
      };
    case "matches": {
      if (out.unmet.length > 0)
        return {
          level: "warning",
          text: `${at}: the handler no longer makes the recorded call(s) ${out.unmet.map((n) => `"${n}"`).join(", ")}: a suspended job goes on without them; ${effect.text}`,
        };
      if (!effect.changed) return undefined;
      const taken = Object.entries(out.versions).map(([name, v]) => `ctx.version "${name}" takes ${v}`);
      return {
        level: "note",
        text: `${at}: ${effect.text}; its recorded calls replay as recorded${taken.length ? ` (${taken.join(", ")})` : ""}`,
      };
    }
  }
}

/**
 * Replays every fixture under `root`/durable-fixtures against the kinds of `appFiles` (the project's
 * Skyforge components' app modules). No fixtures: no findings, and no app is loaded.
 */
export async function checkDurableFixtures(
  root: string,
  appFiles: readonly string[],
): Promise<{ replayed: number; findings: FixtureFinding[] }> {
  if (fixtureFiles(join(root, FIXTURES_DIR)).length === 0) return { replayed: 0, findings: [] };
  const kinds = new Map<string, KindDefinition>();
  for (const file of appFiles) for (const k of (await loadAppModule(file)).app.kinds) kinds.set(k.name, k);
  return replayFixtures(root, kinds);
}

/** Replays every fixture under `root`/durable-fixtures against `kinds`, by name. */
export async function replayFixtures(
  root: string,
  kinds: ReadonlyMap<string, KindDefinition>,
): Promise<{ replayed: number; findings: FixtureFinding[] }> {
  const files = fixtureFiles(join(root, FIXTURES_DIR));
  const findings: FixtureFinding[] = [];
  for (const path of files) {
    const file = relative(root, path);
    const read = parseJournalFixture(readFileSync(path, "utf8"));
    if ("problem" in read) {
      findings.push({ file, level: "fail", text: `not a journal fixture: ${read.problem}` });
      continue;
    }
    const { fixture } = read;
    const kind = kinds.get(fixture.kind);
    if (!kind) {
      findings.push({
        file,
        level: "warning",
        text: `kind ${fixture.kind} is not in the app any more: its suspended jobs have no handler to resume them`,
      });
      continue;
    }
    const found = findingOf(kind, fixture, await replayFixture(kind, fixture));
    if (found) findings.push({ file, ...found });
  }
  return { replayed: files.length, findings };
}

/** The findings as check-deploy prints them, after a line counting the fixtures replayed. */
export function fixtureLines(findings: readonly FixtureFinding[], replayed: number): string[] {
  const label = { warning: "WARNING", note: "note", fail: "FAIL" } as const;
  const warnings = findings.filter((f) => f.level === "warning").length;
  return [
    `durable fixtures: ${replayed} replayed, ${warnings} warning(s)`,
    ...findings.map((f) => `  ${label[f.level]} ${f.file}: ${f.text}`),
  ];
}
