import { Command } from "commander";
import { globalsOf } from "../context.ts";
import { exitCodes, UsageError } from "../exit-codes.ts";
import { clientFor, resolveTarget } from "../target.ts";

interface McpOptions {
  app?: string;
  readOnly?: boolean;
}

/**
 * `skyforge mcp [--read-only] [--app FILE]`: an MCP server on stdin/stdout (docs/guide/mcp.md) whose
 * tools are the app's kinds (one `enqueue_<kind>` each) and the job tools, against what the global
 * options name: the local stack (--endpoint) or a stage (--stage, signed with the user's AWS
 * credentials). The app module (found as `skyforge dev` finds it) gives the kinds' schemas and
 * descriptions; everything else goes through the client. stdout carries the protocol alone, so
 * nothing else is printed there; it runs until its client closes stdin.
 */
export function mcpCommand(): Command {
  return new Command("mcp")
    .description(
      "serve MCP over stdio: one enqueue tool per kind, job tools, jobs as tasks (docs/guide/mcp.md)",
    )
    .option("--read-only", "serve the reading tools only (get_job, search_jobs, job_steps, list_queues)")
    .option("--app <file>", "the module exporting the defineApp value (default: as skyforge dev finds it)")
    .action(async (o: McpOptions, command: Command) => {
      // stdout is the protocol's: a console.log anywhere (the app module's top level, a library)
      // would break the client's framing, so this process's console writes to stderr.
      for (const level of ["log", "info", "debug"] as const) console[level] = console.error;
      // Loaded here: only this command needs the app's bundler and the MCP SDK.
      const { findAppModule } = await import("../../project/find-app.ts");
      const { loadAppModule } = await import("../../project/app-module.ts");
      const found = findAppModule(process.cwd(), o.app);
      if (!found.found) throw new UsageError(`no app module: ${found.reason}`);
      const { app } = await loadAppModule(found.file).catch((err: unknown) => {
        throw new UsageError(err instanceof Error ? err.message : String(err));
      });
      const target = await resolveTarget(globalsOf(command));
      const { serveStdio } = await import("../../mcp/stdio.ts");
      try {
        await serveStdio({ client: clientFor(target), app, readOnly: o.readOnly === true });
      } finally {
        target.close();
      }
      process.exitCode = exitCodes.ok;
    });
}
