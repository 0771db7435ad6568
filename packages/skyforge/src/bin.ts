#!/usr/bin/env node
/**
 * The `skyforge` package's bin (`npx skyforge` in a project that installed it): the operator CLI
 * (cli/), and the project commands `dev` and `check-deploy`, each its own entry of the build
 * (scripts/build-packages.ts) loaded only when asked for, so neither the CLI nor the other command
 * pays for its imports. Dispatched here, not inside cli/: the CLI reaches skyforge only through the
 * client, while these run the engine.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { runCli } from "../../../cli/program.ts";

interface ProjectCommand {
  /** The built entry beside this file, and the function it exports: `(argv) => exit code`. */
  file: string;
  run: string;
  description: string;
}

const projectCommands: Record<string, ProjectCommand> = {
  dev: {
    file: "dev.js",
    run: "runDev",
    description: "run the local stack over your app's kinds (skyforge dev --help)",
  },
  "check-deploy": {
    file: "check-deploy.js",
    run: "runCheckDeploy",
    description: "render sst.config.ts under mocks and check the deploy, offline (skyforge check-deploy --help)",
  },
};

/** cli/exit-codes.ts: the CLI itself failed (here: a package built without the command). */
const INTERNAL = 70;

async function runProjectCommand(name: string, command: ProjectCommand, argv: string[]): Promise<number> {
  const url = new URL(`./${command.file}`, import.meta.url);
  const run = existsSync(url) ? ((await import(url.href)) as Record<string, unknown>)[command.run] : undefined;
  if (typeof run !== "function") {
    process.stderr.write(
      `skyforge: "${name}" is not in this build of skyforge (${fileURLToPath(url)} is missing or exports no ${command.run})\n`,
    );
    return INTERNAL;
  }
  return (run as (argv: string[]) => Promise<number>)(argv);
}

const [name, ...rest] = process.argv.slice(2);
const command = name === undefined ? undefined : projectCommands[name];
if (name !== undefined && command) {
  process.exit(await runProjectCommand(name, command, rest));
}
// Listed in the CLI's help beside its own commands; never run there (dispatched above).
const listed = Object.entries(projectCommands).map(([n, c]) => new Command(n).description(c.description));
await runCli(process.argv, listed);
