import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type CheckedStage, checkDeploy, checkedStages, type StageReport } from "./check-deploy.ts";
import { checkDurableFixtures, fixtureLines } from "./durable-fixtures.ts";
import { functionName } from "./lambda-build.ts";
import { linkedGrants } from "./link-assertions.ts";
import { StageFailed } from "./sst-program.ts";

/**
 * `skyforge check-deploy` (and `npm run check:deploy` here): the offline deploy proof in the
 * project at the working directory (or --root): its sst.config.ts, its Skyforge components and
 * their app modules. Prints, for each stage, one line per resource the program planned, what each
 * `link` to a component grants, and every failure. Exit 0 when every stage is as declared, 1 on a
 * failure, 2 on a usage error.
 */

const USAGE =
  "usage: skyforge check-deploy [--root DIR] [--stage NAME]... [--dev-stage NAME]...  (default: --dev-stage dev --stage ci --stage production)";

function stagesFrom(values: { stage?: string[]; "dev-stage"?: string[] }): readonly CheckedStage[] {
  const asked = [
    ...(values["dev-stage"] ?? []).map((stage) => ({ stage, dev: true })),
    ...(values.stage ?? []).map((stage) => ({ stage, dev: false })),
  ];
  return asked.length > 0 ? asked : checkedStages;
}

function printStage({ run, failures }: StageReport, out: (line: string) => void): void {
  const kib = run.builds.map((b) => `${functionName(b.handler)} ${(b.bytes / 1024).toFixed(0)} KiB`);
  out(
    `${run.stage}${run.dev ? " (sst dev)" : ""}: ${run.resources.length} resources, ` +
      `${run.components.length} Skyforge component(s) (${run.components.map((c) => c.name).join(", ")})` +
      `${kib.length ? `; built ${kib.join(", ")}` : ""}`,
  );
  for (const r of run.resources) out(`  ${r.component ? `[${r.component}] ` : ""}${r.type} ${r.name}`);
  for (const g of linkedGrants(run)) {
    const grants = g.statements.map((s) => `${s.Action.join(",")} on ${s.Resource.join(", ")}`);
    out(`  link ${g.function} -> ${g.component}: ${grants.join("; ")}`);
  }
  for (const f of failures) out(`  FAIL ${f}`);
}

export async function runCheckDeploy(
  argv: string[],
  out: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  let values: { root?: string; stage?: string[]; "dev-stage"?: string[] };
  try {
    values = parseArgs({
      args: argv,
      options: {
        root: { type: "string" },
        stage: { type: "string", multiple: true },
        "dev-stage": { type: "string", multiple: true },
      },
    }).values;
  } catch (err) {
    out(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const root = resolve(values.root ?? process.cwd());
  if (!existsSync(join(root, "sst.config.ts"))) {
    out(`${join(root, "sst.config.ts")}: no such file (run it in an SST project)\n${USAGE}`);
    return 2;
  }
  let reports: StageReport[];
  try {
    reports = await checkDeploy(root, stagesFrom(values));
  } catch (err) {
    if (!(err instanceof StageFailed)) throw err;
    out(`check-deploy: ${err.programError}`);
    return 1;
  }
  for (const report of reports) printStage(report, out);
  // Durable kinds against recorded journals (durable-fixtures/): warnings, unless a file is no fixture.
  const apps = [...new Set(reports.flatMap((r) => r.run.components.map((c) => c.app)))];
  const fixtures = await checkDurableFixtures(root, apps);
  if (fixtures.replayed > 0) for (const line of fixtureLines(fixtures.findings, fixtures.replayed)) out(line);
  const failed =
    reports.some((r) => r.failures.length > 0) || fixtures.findings.some((f) => f.level === "fail");
  out(failed ? "check-deploy: failures above" : "check-deploy: every stage is as declared");
  return failed ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exit(await runCheckDeploy(process.argv.slice(2)));
}
