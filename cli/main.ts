import { flushed } from "./output.ts";
import { main } from "./program.ts";

/** `npx skyforge …`: bin/skyforge.mjs runs this file on the project's Node 24 through tsx. */

// `skyforge tail --json | head -3`: the reader has gone, which is no failure of ours.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
const code = await main(process.argv);
await flushed();
// Exit now: an idle keep-alive socket or the SIGINT listener would otherwise hold the process open.
process.exit(code);
