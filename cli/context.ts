import type { Command } from "commander";
import { type ExitCode, exitCodes } from "./exit-codes.ts";
import { createOutput, type Output } from "./output.ts";
import { type CliClient, clientFor, resolveTarget, type Target, type TargetOptions } from "./target.ts";

/** What every command's action gets: the client for the chosen target, and where to write. */
export interface CommandContext {
  client: CliClient;
  target: Target;
  output: Output;
  /**
   * For commands that stop cleanly at Ctrl-C (tail, bulk enqueue): an AbortSignal that fires at the
   * first SIGINT instead of the process dying. A second Ctrl-C (half a second or more later) exits
   * at once with 130. Other commands keep Node's default: Ctrl-C ends them.
   */
  stopOnInterrupt(): AbortSignal;
}

export interface GlobalOptions extends TargetOptions {
  json?: boolean;
}

/** The global options wherever they were typed (`skyforge --json jobs ls` or `skyforge jobs ls --json`). */
export const globalsOf = (command: Command): GlobalOptions => command.optsWithGlobals() as GlobalOptions;

/**
 * Wraps a command's body as a commander action: builds the context from the global options, runs the
 * body, and leaves its exit code in process.exitCode. Errors go up to main.ts, which reports them.
 */
export function action<Args extends unknown[], Opts>(
  body: (ctx: CommandContext, ...args: [...Args, Opts]) => Promise<ExitCode | undefined>,
) {
  return async (...received: unknown[]): Promise<void> => {
    const command = received.at(-1) as Command;
    const args = received.slice(0, -1) as [...Args, Opts];
    const globals = globalsOf(command);
    const output = createOutput(globals.json === true);
    const target = await resolveTarget(globals);
    try {
      const ctx: CommandContext = { client: clientFor(target), target, output, stopOnInterrupt };
      process.exitCode = (await body(ctx, ...args)) ?? exitCodes.ok;
    } finally {
      target.close();
    }
  };
}

let interrupt: AbortController | undefined;

function stopOnInterrupt(): AbortSignal {
  if (interrupt) return interrupt.signal;
  const controller = new AbortController();
  interrupt = controller;
  let firstAt = 0;
  process.on("SIGINT", () => {
    // The launcher forwards the SIGINT a terminal also sends us directly: one Ctrl-C can arrive twice.
    if (!controller.signal.aborted) {
      firstAt = Date.now();
      controller.abort();
    } else if (Date.now() - firstAt >= 500) {
      process.exit(exitCodes.interrupted);
    }
  });
  return controller.signal;
}
