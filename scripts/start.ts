import { fileURLToPath } from "node:url";
import { runDev } from "../local/dev-command.ts";

/**
 * `npm start`: the embedded local stack over this repo's app/, the same code as `skyforge dev`
 * (local/dev-command.ts). No AWS, no Docker, no Java. Its table and queues live in `.skyforge/` at
 * the project root (SKYFORGE_DATA_DIR elsewhere), so they survive a restart; `npm start -- --fresh`
 * starts from nothing. A change to a file of app/ reloads the kinds in the running stack.
 */
const app = fileURLToPath(new URL("../app/index.ts", import.meta.url));
const code = await runDev(["--app", app, ...process.argv.slice(2)], {
  usage: "npm start [-- --fresh]",
  freshHint: "npm start -- --fresh",
  defaultDataDir: fileURLToPath(new URL("../.skyforge", import.meta.url)),
  // The Fargate task's entry point, from source: this Node (24) runs its TypeScript itself.
  pool: {
    command: [process.execPath, fileURLToPath(new URL("../functions/pool/dev-main.ts", import.meta.url))],
  },
  tryLines: (url) => [
    `  try: curl -s -X POST ${url}/jobs -H 'content-type: application/json' -d '{"kind":"echo","payload":{"hello":"world"}}'`,
    `  heavy job: curl -s -X POST ${url}/jobs -H 'content-type: application/json' -d '{"kind":"py-digest","payload":{"text":"hello","rounds":100000}}'`,
  ],
});
process.exit(code);
