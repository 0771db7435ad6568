import { app } from "../../app/index.ts";
import { startPool } from "../handlers.ts";

/**
 * This repository's pool task: the demo app's pool kinds (infra/pool.Dockerfile bundles this file;
 * `npm start` runs it through tsx). What the process does is functions/handlers.ts's startPool.
 */
startPool(app);
