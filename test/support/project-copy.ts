import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root, whose files a copy starts from. */
export const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

/** What `npm start` reads; node_modules is linked, not copied. */
const copied = [
  "app",
  "lib",
  "functions",
  "local",
  "project",
  "console",
  "http",
  "client",
  "cli",
  "mcp",
  "bin",
  "bench",
  "scripts",
  "children",
  "package.json",
  "tsconfig.json",
];

/** The line of app/index.ts a new kind's line goes after. */
const ECHO_LINE = '  (await import("./kinds/echo.ts")).echo,\n';

export interface ProjectCopy {
  dir: string;
  /** app/index.ts as copied, and after addKind() (equal until then). */
  indexBefore: string;
  remove(): void;
}

/** What a deploy reads besides: the SST config, infra/, and SST's platform (linked, like node_modules). */
const deployCopied = ["infra", "sst.config.ts"];

/**
 * A temporary copy of the project that `npm start` can run, as a user's checkout; with `deploy`, one
 * that SST can also build (the platform must exist: see scripts/deploy/sst-program.ts ensurePlatform).
 */
export function copyProject(prefix: string, options: { deploy?: boolean } = {}): ProjectCopy {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    for (const entry of [...copied, ...(options.deploy ? deployCopied : [])]) {
      cpSync(join(projectRoot, entry), join(dir, entry), { recursive: true });
    }
    symlinkSync(join(projectRoot, "node_modules"), join(dir, "node_modules"), "dir");
    if (options.deploy) linkPlatform(dir);
    return { dir, indexBefore: readFileSync(join(dir, "app/index.ts"), "utf8"), remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/**
 * The copy's .sst/: SST's platform and what `sst install` wrote beside it, linked; the rest (the
 * components' generated entries under .sst/skyforge/) the copy's own, so they import its app/.
 */
export function linkPlatform(dir: string): void {
  mkdirSync(join(dir, ".sst"), { recursive: true });
  for (const entry of readdirSync(join(projectRoot, ".sst"))) {
    if (entry === "skyforge" || entry.startsWith("check-deploy.")) continue;
    symlinkSync(join(projectRoot, ".sst", entry), join(dir, ".sst", entry));
  }
}

/**
 * Adds a kind the way the README says: the file in app/kinds/ and one line in app/index.ts.
 * Returns app/index.ts after the edit.
 */
export function addKind(copy: ProjectCopy, file: string, exportName: string, source: string): string {
  writeFileSync(join(copy.dir, "app/kinds", file), source);
  const indexPath = join(copy.dir, "app/index.ts");
  const index = readFileSync(indexPath, "utf8");
  if (!index.includes(ECHO_LINE)) throw new Error(`${indexPath} no longer lists the echo kind as expected`);
  const after = index.replace(ECHO_LINE, `${ECHO_LINE}  (await import("./kinds/${file}")).${exportName},\n`);
  writeFileSync(indexPath, after);
  return after;
}
