import { pascalCase } from "../lib/deploy-plan/resource-names";
import { apiFunction, callback, enqueue } from "./api";
import { cleanup, cron, reaper } from "./schedules";
import { workers } from "./workers";

/**
 * Functions leave the AWS SDK to Lambda's nodejs24.x runtime (infra/function-defaults.ts), so a
 * runtime update would change the SDK under a running stage. With "FunctionUpdate", Lambda moves a
 * function to a newer runtime version only when skyforge deploys that function: the SDK changes at
 * a deploy, never between two. Under `sst dev` the functions are SST's bridge; nothing to pin.
 */
const functionNames: [string, $util.Input<string>][] = [
  ["Enqueue", enqueue.name],
  ["ApiHandler", apiFunction.name],
  ["Callback", callback.name],
  ...workers.map((w): [string, $util.Input<string>] => [`Worker${pascalCase(w.queue)}`, w.functionName]),
  ["Reaper", reaper.nodes.function.name],
  ["Cleanup", cleanup.nodes.function.name],
  ["Cron", cron.nodes.function.name],
];

if (!$dev) {
  for (const [label, functionName] of functionNames) {
    new aws.lambda.RuntimeManagementConfig(`${label}RuntimeUpdates`, {
      functionName,
      updateRuntimeOn: "FunctionUpdate",
    });
  }
}
