import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Command } from "commander";
import type { WaitingCounts } from "../../client/skyforge-client.ts";
import { fixtureProblem, journalFixture, tokenIdsOf } from "../../client/vocabulary.ts";
import { action } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { table } from "../output.ts";

/**
 * `skyforge durable …`: a durable kind's deploy seen from its jobs (docs/guide/durable-jobs.md,
 * "Changing a durable kind safely"). `durable waiting` counts the suspended jobs a deploy will meet,
 * per kind and version; `durable fixture <jobId>` records one job's journal as a file of the project,
 * which `check-deploy` replays against the kind's code as it then stands.
 */

/** Where `durable fixture` writes unless told: the project's fixtures folder, one per job. */
export const fixturePath = (kind: string, jobId: string) => join("durable-fixtures", kind, `${jobId}.json`);

interface FixtureOptions {
  out?: string;
  force?: boolean;
}

function fixtureCommand(): Command {
  return new Command("fixture")
    .description(
      "record a finished or suspended durable job's journal as a fixture file, which check-deploy replays against your code (GET /jobs/{id}, /jobs/{id}/steps, /tokens/{id}; tokens' secrets left out)",
    )
    .argument("<id>", "the job's id")
    .option("--out <file>", "where to write it (default durable-fixtures/<kind>/<id>.json)")
    .option("--force", "replace a file already there")
    .action(
      action<[string], FixtureOptions>(async ({ client, output }, id, o) => {
        const [job, steps] = await Promise.all([client.get(id), client.steps(id)]);
        const problem = fixtureProblem(job, steps);
        if (problem) throw new UsageError(problem);
        const tokens = await Promise.all(tokenIdsOf(steps).map((t) => client.token(t)));
        const fixture = journalFixture(job, steps, tokens, new Date());
        const file = resolve(o.out ?? fixturePath(job.kind, job.id));
        if (existsSync(file) && !o.force) throw new UsageError(`${file} exists: pass --force to replace it`);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`);
        const summary = {
          file,
          kind: fixture.kind,
          version: fixture.version,
          status: fixture.status,
          ops: fixture.ops.length,
        };
        output.result(
          summary,
          () =>
            `wrote ${file}: job ${id} of kind ${fixture.kind} (${fixture.status}), ${fixture.ops.length} recorded calls`,
        );
        return undefined;
      }),
    );
}

function waitingText(answer: WaitingCounts): string {
  if (answer.waiting.length === 0) return "no suspended durable jobs";
  const rows = answer.waiting.map((w) => [w.queue, w.kind, w.version ?? "(none)", w.jobs]);
  const note = answer.complete ? "" : "\n(the count stopped at its bound: at least these)";
  return `${table(["QUEUE", "KIND", "VERSION", "JOBS"], rows)}${note}`;
}

function waitingCommand(): Command {
  return new Command("waiting")
    .description(
      "count suspended durable jobs per queue, kind and version: what a deploy's new code will meet (GET /jobs?waiting=true)",
    )
    .option("--queue <name>", "one queue's only")
    .action(
      action<[], { queue?: string }>(async ({ client, output }, o) => {
        const answer = await client.waitingCounts(o.queue !== undefined ? { queue: o.queue } : {});
        output.result(answer, () => waitingText(answer));
        return undefined;
      }),
    );
}

export function durableCommand(): Command {
  return new Command("durable")
    .description("durable kinds and their suspended jobs, before a deploy")
    .addCommand(waitingCommand())
    .addCommand(fixtureCommand());
}
