import { type Build, childName, childOpts } from "./build";

/**
 * Functions leave the AWS SDK to Lambda's nodejs24.x runtime (infra/function-defaults.ts), so a
 * runtime update would change the SDK under a running stage. With "FunctionUpdate", Lambda moves a
 * function to a newer runtime version only when skyforge deploys that function: the SDK changes at
 * a deploy, never between two. Under `sst dev` the functions are SST's bridge; nothing to pin.
 */
export function pinRuntimes(build: Build, functionNames: readonly [string, $util.Input<string>][]): void {
  if ($dev) return;
  for (const [part, functionName] of functionNames) {
    new aws.lambda.RuntimeManagementConfig(
      childName(build, `${part}RuntimeUpdates`),
      { functionName, updateRuntimeOn: "FunctionUpdate" },
      childOpts(build),
    );
  }
}
