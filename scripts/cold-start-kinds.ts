import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { buildSettings, type SdkOption } from "./bundle-sizes.ts";
import { sstNodeBuildOptions } from "./deploy/lambda-build.ts";

/**
 * The cold-start scenario's generated apps (issue 44): the worker of an app of N kinds, each kind
 * with a realistic payload schema of 15 fields and a handler that imports a small library (ulid), built
 * as a deployment builds its worker. Each app is written twice: with its kinds declared to load on
 * first use (`load`, the declaration apart from a `.job.ts` module) and declared whole, so the
 * bench shows what the number of kinds costs the worker's import either way.
 */

export const KIND_COUNTS = [2, 50] as const;
export type Declared = "lazy" | "whole";

export interface GeneratedWorker {
  count: number;
  declared: Declared;
  /** The worker's bundle; it also exports `app`, for the first-job probe. */
  file: string;
  /** A file that imports the bundle, then loads its first kind's module and prints how long that took (ms). */
  probe: string;
}

/** The schema and handler of generated kind `i`: 15 fields of the usual sorts, a library call, a result. */
function jobSource(i: number, pkg: string): string {
  return `import { ulid } from "ulid";
import * as z from "zod";
import { defineJob } from ${JSON.stringify(pkg)};

export default defineJob({
  payload: z.object({
    id: z.string().min(1).max(64),
    email: z.email(),
    name: z.string().min(1).max(200),
    age: z.number().int().min(0).max(150),
    plan: z.enum(["free", "pro", "team"]),
    tags: z.array(z.string().max(32)).max(20),
    createdAt: z.iso.datetime(),
    score: z.number().min(0).max(1),
    active: z.boolean(),
    country: z.string().length(2),
    address: z.object({ street: z.string().max(200), city: z.string().max(100), zip: z.string().regex(/^[0-9]{5}$/) }),
    phone: z.string().max(32).optional(),
    referrer: z.url().optional(),
    notes: z.string().max(1000).default(""),
    step${i}: z.number().int().min(0),
  }),
  handler: async (p) => ({ receipt: ulid(), kind: ${i}, to: p.email.toLowerCase(), tags: p.tags.length }),
});
`;
}

function lazyKindSource(i: number, pkg: string): string {
  return `import { defineKind } from ${JSON.stringify(pkg)};

export const kind${i} = defineKind({
  name: "kind-${i}",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  load: () => import("./kind-${i}.job.ts"),
});
`;
}

/** The same kind declared whole: the job module's payload and handler inline. */
function wholeKindSource(i: number, pkg: string): string {
  const job = jobSource(i, pkg)
    .replace("import { defineJob }", "import { defineKind }")
    .replace(
      "export default defineJob({",
      `export const kind${i} = defineKind({
  name: "kind-${i}",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,`,
    );
  return job;
}

/**
 * Writes the app of `count` kinds under `dir` and its worker entry (as infra/entries.ts writes a
 * deployment's, plus an export of the app), then bundles it with the deployed settings.
 */
async function generatedWorker(
  root: string,
  dir: string,
  count: number,
  declared: Declared,
  sdk: SdkOption,
): Promise<GeneratedWorker> {
  const base = join(dir, `kinds-${declared}-${count}`);
  const kindsDir = join(base, "kinds");
  mkdirSync(kindsDir, { recursive: true });
  const pkg = join(root, "packages", "skyforge", "src", "index.ts");
  for (let i = 0; i < count; i++) {
    if (declared === "lazy") {
      writeFileSync(join(kindsDir, `kind-${i}.ts`), lazyKindSource(i, pkg));
      writeFileSync(join(kindsDir, `kind-${i}.job.ts`), jobSource(i, pkg));
    } else {
      writeFileSync(join(kindsDir, `kind-${i}.ts`), wholeKindSource(i, pkg));
    }
  }
  const names = Array.from({ length: count }, (_, i) => `kind${i}`);
  writeFileSync(
    join(base, "app.ts"),
    [
      `import { defineApp } from ${JSON.stringify(pkg)};`,
      `import { queues } from ${JSON.stringify(join(root, "app", "queues.ts"))};`,
      ...names.map((n, i) => `import { ${n} } from "./kinds/kind-${i}.ts";`),
      `export const app = defineApp({ queues, kinds: [${names.join(", ")}], poolKinds: [], schedules: [], rateLimits: [] });`,
      "",
    ].join("\n"),
  );
  const entry = join(base, "worker.ts");
  writeFileSync(
    entry,
    [
      'import { app } from "./app.ts";',
      `import { workerHandler } from ${JSON.stringify(join(root, "functions", "handlers.ts"))};`,
      "export const handler = workerHandler(app);",
      "export { app };",
      "",
    ].join("\n"),
  );
  const file = join(base, "worker.mjs");
  await build({ absWorkingDir: root, ...sstNodeBuildOptions(entry, file, buildSettings(sdk)) });
  const probe = join(base, "first-job.mjs");
  writeFileSync(probe, firstLoadProbe("./worker.mjs", "kind-0"));
  return { count, declared, file, probe };
}

/**
 * A probe that imports a worker bundle exporting its app, then times what the first job of `kind`
 * loads (its module, when the kind loads on first use; nothing when it is declared whole) and prints
 * the milliseconds.
 */
export function firstLoadProbe(bundle: string, kind: string): string {
  return `const { app } = await import(${JSON.stringify(bundle)});
const kind = app.kinds.find((k) => k.name === ${JSON.stringify(kind)});
const start = performance.now();
if (kind.load && !kind.handler) await kind.load();
console.log(performance.now() - start);
`;
}

/** The generated workers: each count, each way of declaring. */
export async function generatedWorkers(
  root: string,
  dir: string,
  sdk: SdkOption,
): Promise<GeneratedWorker[]> {
  const workers: GeneratedWorker[] = [];
  for (const declared of ["lazy", "whole"] as const)
    for (const count of KIND_COUNTS) workers.push(await generatedWorker(root, dir, count, declared, sdk));
  return workers;
}

/**
 * The deployed worker's bundle again, built from an entry that also exports the app, and its probe
 * for the first job of `kind` (the cold path's second part: what that job loads after init).
 */
export async function demoWorkerProbe(
  root: string,
  dir: string,
  sdk: SdkOption,
  workerEntry: string,
  kind: string,
): Promise<string> {
  const base = join(dir, "demo-first-job");
  mkdirSync(base, { recursive: true });
  const entry = join(base, "worker.ts");
  writeFileSync(
    entry,
    [
      `export { app } from ${JSON.stringify(join(root, "app", "index.ts"))};`,
      `export { handler } from ${JSON.stringify(workerEntry)};`,
      "",
    ].join("\n"),
  );
  await build({
    absWorkingDir: root,
    ...sstNodeBuildOptions(entry, join(base, "worker.mjs"), buildSettings(sdk)),
  });
  const probe = join(base, "first-job.mjs");
  writeFileSync(probe, firstLoadProbe("./worker.mjs", kind));
  return probe;
}
