import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { Command } from "commander";
import { appTypesSource } from "../app-types.ts";
import { globalsOf } from "../context.ts";
import { exitCodes, UsageError } from "../exit-codes.ts";
import { createOutput } from "../output.ts";

interface TypesOptions {
  out?: string;
  app: string;
}

/**
 * `skyforge types [--out FILE]`: the app's kind names, payload types and queue names as a
 * declaration file (cli/app-types.ts), for a project that installs `@skyforge/client` without the
 * app's source: `createClient<SkyforgeApp>()`. Reads the app module `--app` names (this repo's
 * app/index.ts by default, from the repo's root) through project/app-module.ts, never by a static
 * import: the `skyforge` package's CLI carries no app of its own. Talks to no stack: it ignores
 * --endpoint and --stage. Without --out, the file goes to stdout.
 */
export function typesCommand(): Command {
  return new Command("types")
    .description(
      "write the app's kinds and payload types as a .d.ts for @skyforge/client (createClient<SkyforgeApp>)",
    )
    .option("--out <file>", "the declaration file to write (default: stdout)")
    .option("--app <file>", "the module exporting the defineApp value", "app/index.ts")
    .action(async (o: TypesOptions, command: Command) => {
      const output = createOutput(globalsOf(command).json === true);
      // Loaded here, not at the CLI's start: only this command needs the app, its bundler and its handlers' imports.
      const { loadAppModule } = await import("../../project/app-module.ts");
      const { app } = await loadAppModule(o.app).catch((err: unknown) => {
        throw new UsageError(err instanceof Error ? err.message : String(err));
      });
      // A kind whose schema loads on first use (its declaration's `load`): its module loads here.
      const kinds = await Promise.all(
        app.kinds.map(async (k) =>
          k.payload || !k.load ? k : { ...k, payload: (await k.load()).default.payload },
        ),
      );
      const source = appTypesSource({ ...app, kinds }, o.app);
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
