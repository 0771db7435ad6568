#!/usr/bin/env node
/**
 * `npx skyforge …`: the launcher of the operator CLI (cli/README.md).
 *
 * npx runs a bin with whatever `node` is on the PATH (Node 20 on some machines), while the project
 * runs on Node 24 (its `node@24` devDependency). So this file stays plain JavaScript that any Node ≥ 18
 * can run, and starts the CLI on the project's Node 24, found from this file's own location (not the
 * working directory, so the CLI works from any folder of the project): the CLI bundled by esbuild and
 * cached (bin/cli-bundle.mjs), or, when no bundle can be made, `cli/main.ts` with `--import tsx`. It
 * passes the arguments, stdin/stdout/stderr and the working directory through, forwards
 * SIGINT/SIGTERM/SIGHUP to the CLI, and ends as the CLI ended: the same exit code, or the same signal.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cliBundle } from "./cli-bundle.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
/** The CLI's exit code for a setup it can't run on (cli/exit-codes.ts: usage). */
const SETUP_ERROR = 2;

function fail(message) {
  process.stderr.write(`skyforge: ${message}\n`);
  process.exit(SETUP_ERROR);
}

/** The `node@24` devDependency's binary; the running Node only if it is already 24 or later. */
function projectNode() {
  try {
    const bin = join(dirname(require.resolve("node/package.json")), "bin");
    for (const name of process.platform === "win32" ? ["node.exe", "node"] : ["node"]) {
      if (existsSync(join(bin, name))) return join(bin, name);
    }
  } catch {
    // not installed: fall through
  }
  if (Number(process.versions.node.split(".")[0]) >= 24) return process.execPath;
  return fail(`needs Node 24: run \`npm ci\` in ${root} (it installs the node@24 devDependency)`);
}

function tsxLoader() {
  try {
    return pathToFileURL(require.resolve("tsx")).href;
  } catch {
    return fail(`tsx is not installed: run \`npm ci\` in ${root}`);
  }
}

const node = projectNode();
const bundle = await cliBundle(root, require);
const child = spawn(
  node,
  [
    ...(bundle ? [bundle] : ["--import", tsxLoader(), join(root, "cli", "main.ts")]),
    ...process.argv.slice(2),
  ],
  {
    stdio: "inherit",
    // The project's tsconfig for tsx, wherever the CLI is run from.
    env: bundle
      ? process.env
      : { ...process.env, TSX_TSCONFIG_PATH: process.env.TSX_TSCONFIG_PATH ?? join(root, "tsconfig.json") },
  },
);

// A terminal's Ctrl-C reaches both processes (one process group); a `kill` of this pid reaches only
// this one. Forwarding covers both: the CLI treats a doubled SIGINT as one (cli/context.ts).
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.once("error", (err) => fail(`could not start the CLI: ${err.message}`));
child.once("exit", (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  // Die of the same signal, so a shell sees what a user would expect (130 for Ctrl-C).
  for (const s of forwarded) process.off(s, forward);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
});
