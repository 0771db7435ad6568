import { ConfigError } from "../../lib/errors.ts";
import { POOL_BAD_CONFIG_EXIT_CODE } from "../../lib/pool/pool-options.ts";
import { loadAppModule } from "../../project/app-module.ts";
import { startPool } from "../handlers.ts";

/**
 * The local stack's pool process (`skyforge dev`, `npm start`; the package builds it as dist/pool.js):
 * the same pool as the Fargate task's, over the app module the stack runs, which it names in
 * SKYFORGE_APP_MODULE (local/dev-command.ts). A module that doesn't load ends it with
 * POOL_BAD_CONFIG_EXIT_CODE, which the stack's supervisor doesn't restart (the stack reloads it).
 */
const module = process.env.SKYFORGE_APP_MODULE;
try {
  if (!module)
    throw new ConfigError("SKYFORGE_APP_MODULE is not set: the local pool runs the stack's app module");
  startPool((await loadAppModule(module)).app);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(POOL_BAD_CONFIG_EXIT_CODE);
}
