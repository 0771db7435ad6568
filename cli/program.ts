import { Command, CommanderError, Option } from "commander";
import pkg from "../package.json" with { type: "json" };
import { consoleCommand } from "./commands/console.ts";
import { doctorCommand } from "./commands/doctor.ts";
import { eventsCommand, tokensCommand } from "./commands/durable.ts";
import { durableCommand } from "./commands/durable-ops.ts";
import { enqueueCommand } from "./commands/enqueue.ts";
import { groupsCommand } from "./commands/groups.ts";
import { jobsCommand } from "./commands/jobs.ts";
import { mcpCommand } from "./commands/mcp.ts";
import { queuesCommand } from "./commands/queues.ts";
import { schedulesCommand } from "./commands/schedules.ts";
import { tailCommand } from "./commands/tail.ts";
import { typesCommand } from "./commands/types.ts";
import { errorReport, exitCodeFor } from "./exit-codes.ts";
import { endpointUrl } from "./options.ts";
import { createOutput, flushed, jsonText, terminalText } from "./output.ts";
import { DEFAULT_ENDPOINT } from "./target.ts";

/**
 * The operator CLI's commands and global options (cli/README.md). Every command reaches skyforge
 * through the typed client (client/), over the HTTP API or Lambda Invoke, at a local stack or a
 * deployed stage.
 */
export function buildProgram(extra: readonly Command[] = []): Command {
  const program = new Command("skyforge")
    .description(
      "Operate skyforge: jobs, bulk enqueue, queues, schedules, groups, tokens, events, tail; on npm start or a deployed stage.",
    )
    // With the Node that runs it: the launcher's job is to make that the project's Node 24.
    .version(`${pkg.version} (node ${process.version})`)
    .option(
      "--endpoint <url>",
      `a local stack's API (also SKYFORGE_ENDPOINT; default http://127.0.0.1:$PORT when PORT is set, else ${DEFAULT_ENDPOINT})`,
      endpointUrl,
    )
    .option("--stage <name>", "a deployed stage: its SST outputs, requests signed by your AWS credentials")
    .option("--outputs <file>", "with --stage: a saved copy of that stage's .sst/outputs.json")
    .addOption(
      new Option(
        "--transport <transport>",
        "the HTTP API (default), or Lambda Invoke of the API function",
      ).choices(["http", "invoke"]),
    )
    .option(
      "--region <region>",
      "the AWS region to sign for (default: a stage's, from its outputs; an execute-api URL's; AWS_REGION)",
    )
    .option(
      "--allow-plain-http",
      "send to an http:// endpoint that isn't loopback (refused otherwise: requests, signature and session token in the clear)",
    )
    .option("--json", "machine-readable: one JSON document on stdout, errors as JSON on stderr")
    .addHelpText(
      "after",
      `
Exit codes: 0 ok, 1 some items failed (bulk enqueue) or doctor found a problem, 2 usage error, 3 the API refused (4xx),
4 no usable answer (unreachable, not the API's, or a 5xx), 70 the CLI failed (a bug), 130 interrupted (Ctrl-C).`,
    );
  for (const command of [
    jobsCommand(),
    enqueueCommand(),
    queuesCommand(),
    schedulesCommand(),
    groupsCommand(),
    tokensCommand(),
    eventsCommand(),
    durableCommand(),
    tailCommand(),
    doctorCommand(),
    consoleCommand(),
    typesCommand(),
    mcpCommand(),
    ...extra,
  ]) {
    program.addCommand(command);
  }
  return program;
}

/** Commander's own errors (an unknown option, a bad value) in the --json shape too, and never an exit of its own. */
function configure(command: Command, json: boolean): void {
  command.exitOverride();
  command.showSuggestionAfterError(true);
  command.configureOutput({
    outputError: (text, write) =>
      write(
        json
          ? `${jsonText({ error: { code: "usage", message: text.trim().replace(/^error: /, "") } })}\n`
          : terminalText(text),
      ),
  });
  for (const sub of command.commands) configure(sub, json);
}

/** Runs the command line; `extra` commands are listed beside the CLI's own (the package's bin adds its project commands). */
export async function main(argv: readonly string[], extra: readonly Command[] = []): Promise<number> {
  // Known before parsing, so a usage error is reported in the shape the caller asked for.
  const json = argv.includes("--json");
  const program = buildProgram(extra);
  configure(program, json);
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    // Commander has already printed its own errors (and help); everything else is reported here.
    if (!(err instanceof CommanderError)) createOutput(json).error(errorReport(err));
    return exitCodeFor(err);
  }
  return Number(process.exitCode ?? 0);
}

/** The CLI as a process: runs the command line, then exits with its code once stdout has drained. */
export async function runCli(argv: readonly string[], extra: readonly Command[] = []): Promise<never> {
  // `skyforge tail --json | head -3`: the reader has gone, which is no failure of ours.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
  const code = await main(argv, extra);
  await flushed();
  // Exit now: an idle keep-alive socket or the SIGINT listener would otherwise hold the process open.
  process.exit(code);
}
