import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";

/**
 * The entry points a Skyforge component deploys, generated into the user's project under
 * `.sst/skyforge/<component>/` (git-ignored with the rest of .sst/): each imports the component's
 * app module and calls its factory from the engine's handlers (functions/handlers.ts), so SST
 * bundles each function from the user's own kinds and the engine, nothing else. No SST globals
 * here: scripts/deploy/ writes the same entries to bundle and time them.
 */

/** Each Lambda function of a deployment, by the factory of functions/handlers.ts it calls. */
export const LAMBDA_FACTORIES = {
  enqueue: "enqueueHandler",
  api: "apiHandler",
  worker: "workerHandler",
  reaper: "reaperHandler",
  cleanup: "cleanupHandler",
  cron: "cronHandler",
  "token-callback": "tokenCallbackHandler",
  "realtime-authorizer": "realtimeAuthorizerHandler",
  "realtime-replay": "realtimeReplayHandler",
} as const;
export type LambdaFunction = keyof typeof LAMBDA_FACTORIES;
export const lambdaFunctions = Object.keys(LAMBDA_FACTORIES) as LambdaFunction[];

/**
 * The functions whose factory builds its handler without the app: their entries don't import the
 * app module, so their bundles hold none of its kinds and their cold start evaluates none (the
 * realtime authorizer reads a token and the stack's secret, nothing of the app).
 */
export const APP_FREE_FUNCTIONS: ReadonlySet<LambdaFunction> = new Set(["realtime-authorizer"]);

/** Where the engine's handlers come from when the app module imports the engine as a package. */
export const PACKAGE_HANDLERS = "skyforge/lambda";
/** The engine source that defines `defineApp`, and where its handlers sit beside it. */
const ENGINE_MARKER = join("lib", "declarations", "define-app.ts");
const ENGINE_HANDLERS = join("functions", "handlers.ts");

export interface EntrySource {
  /** The project root (where sst.config.ts is). */
  root: string;
  /** The component's name: its entries' folder. */
  component: string;
  /** The app module's absolute path, and the export that holds the app. */
  appFile: string;
  appExport: "default" | "app";
  /** functions/handlers.ts's absolute path, or the package specifier (PACKAGE_HANDLERS). */
  handlers: string;
}

/**
 * The handlers of the engine the app module itself imports: this repository's sources when the
 * app imports them by path (this repo's app/, or a project that imports a checkout's lib/), else
 * the installed package's. One engine for the kinds and the handlers: its error classes must be
 * the very classes a handler throws.
 */
export function handlersFor(appInputs: readonly string[]): string {
  for (const input of appInputs) {
    if (!input.endsWith(`${sep}${ENGINE_MARKER}`)) continue;
    const handlers = join(input.slice(0, -ENGINE_MARKER.length), ENGINE_HANDLERS);
    if (existsSync(handlers)) return handlers;
  }
  return PACKAGE_HANDLERS;
}

export function entriesDir(root: string, component: string): string {
  return join(root, ".sst", "skyforge", component);
}

/** The handler string SST is given for a function's entry ("…/worker.handler", from the project root). */
export function entryHandler(component: string, fn: LambdaFunction): string {
  return `.sst/skyforge/${component}/${fn}.handler`;
}

/** The pool task's entry (the project-relative path of a module that starts the pool). */
export function poolEntry(component: string): string {
  return `.sst/skyforge/${component}/pool.ts`;
}

/** An import specifier for `target` from a module in `fromDir`: relative, with forward slashes. */
function specifier(fromDir: string, target: string): string {
  if (!isAbsolute(target)) return target;
  const path = relative(fromDir, target).split(sep).join("/");
  return path.startsWith(".") ? path : `./${path}`;
}

/** Writes a file only when its text changes, through a rename: a concurrent reader never sees half of it. */
function writeIfChanged(file: string, text: string): void {
  if (existsSync(file) && readFileSync(file, "utf8") === text) return;
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

function entryText(source: EntrySource, dir: string, factory: string, body: string, withApp = true): string {
  const appImport = source.appExport === "default" ? "app" : "{ app }";
  return [
    `// Written by skyforge's SST component "${source.component}" from its app module on every deploy: don't edit.`,
    ...(withApp ? [`import ${appImport} from ${JSON.stringify(specifier(dir, source.appFile))};`] : []),
    `import { ${factory} } from ${JSON.stringify(specifier(dir, source.handlers))};`,
    body,
    "",
  ].join("\n");
}

/** Writes every entry of the component (the Lambda functions' and the pool's) and returns their handlers. */
export function writeEntries(source: EntrySource): Record<LambdaFunction, string> {
  const dir = entriesDir(source.root, source.component);
  const handlers = {} as Record<LambdaFunction, string>;
  for (const fn of lambdaFunctions) {
    const factory = LAMBDA_FACTORIES[fn];
    const withApp = !APP_FREE_FUNCTIONS.has(fn);
    const call = withApp ? `${factory}(app)` : `${factory}()`;
    writeIfChanged(
      join(dir, `${fn}.ts`),
      entryText(source, dir, factory, `export const handler = ${call};`, withApp),
    );
    handlers[fn] = entryHandler(source.component, fn);
  }
  writeIfChanged(join(dir, "pool.ts"), entryText(source, dir, "startPool", "startPool(app);"));
  return handlers;
}
