import { runCli } from "./program.ts";

/** `npx skyforge …`: bin/skyforge.mjs runs this file on the project's Node 24 through tsx. */
await runCli(process.argv);
