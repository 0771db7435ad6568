import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { Command } from "commander";
import { appTypesSource } from "../app-types.ts";
import { globalsOf } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import { createOutput } from "../output.ts";

interface TypesOptions {
  out?: string;
}

/**
 * `skyforge types [--out FILE]`: the app's kind names, payload types and queue names as a
 * declaration file (cli/app-types.ts), for a project that installs `@skyforge/client` without the
 * app's source: `createClient<SkyforgeApp>()`. Reads this project's app (app/index.ts) and talks to
 * no stack: it ignores --endpoint and --stage. Without --out, the file goes to stdout.
 */
export function typesCommand(): Command {
  return new Command("types")
    .description(
      "write the app's kinds and payload types as a .d.ts for @skyforge/client (createClient<SkyforgeApp>)",
    )
    .option("--out <file>", "the declaration file to write (default: stdout)")
    .action(async (o: TypesOptions, command: Command) => {
      const output = createOutput(globalsOf(command).json === true);
      // Loaded here, not at the CLI's start: only this command needs the app and its handlers' imports.
      const { app } = await import("../../app/index.ts");
      const source = appTypesSource(app, "app/index.ts");
      if (o.out === undefined) {
        process.stdout.write(source);
      } else {
        const file = resolve(o.out);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, source);
        const kinds = app.kinds.length + app.poolKinds.length;
        output.line({ file, kinds }, () => `wrote ${file}: ${kinds} kinds`);
      }
      process.exitCode = exitCodes.ok;
    });
}
