import { apiThrottlePlan } from "../lib/deploy-plan/api-throttle";

/**
 * What a flood of requests may spend (lib/deploy-plan/api-throttle.ts), from the deployer's settings
 * (SKYFORGE_API_RATE_LIMIT and the others it names; docs/guide/deploy.md). sst.config.ts imports
 * this before it declares anything, so a bad setting stops the deploy before any resource is planned.
 */
export const throttle = apiThrottlePlan(process.env);
