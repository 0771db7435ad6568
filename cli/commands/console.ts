import { once } from "node:events";
import { Command } from "commander";
import { startConsoleServer } from "../../console/serve.ts";
import { action } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import { integer } from "../options.ts";

interface ConsoleOptions {
  port: number;
}

/**
 * `skyforge console [--stage NAME]`: the web console on a loopback port, its API requests forwarded
 * through the CLI's transport (SigV4 for a stage), so a stage's IAM-only API is never opened to
 * anyone. The address it prints carries this run's token in its fragment (console/console-token.ts):
 * the proxy forwards only the calls of a page opened at it. Runs until Ctrl-C (exit 0).
 */
export function consoleCommand(): Command {
  return new Command("console")
    .description(
      "serve the web console on 127.0.0.1, talking to the target's API through the CLI's transport",
    )
    .option("--port <port>", "the local port (0 picks a free one)", integer(0, 65535), 0)
    .action(
      action<[], ConsoleOptions>(async ({ target, output, stopOnInterrupt }, o) => {
        const stop = stopOnInterrupt();
        const server = await startConsoleServer({ transport: target.transport, port: o.port });
        output.line({ url: server.url, target: target.description }, () => `console: ${server.url}`);
        output.note(`console: forwarding to ${target.description} (Ctrl-C to stop)`);
        output.note(
          "console: the address carries this run's token: whoever has it acts with your credentials",
        );
        if (!stop.aborted) await once(stop, "abort");
        await server.close();
        return exitCodes.ok;
      }),
    );
}
