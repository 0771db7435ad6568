import { type Build, childName, childOpts } from "./build";
import { lambdaArchitecture, lambdaRuntime, nodejsBuild } from "./function-defaults";
import { lambdaTrust } from "./role-trust";
import { transformed } from "./skyforge-args";

/**
 * A function's args: the defaults above and JSON logs kept a month, then the component's
 * `transform.function`, then the role's trust (infra/role-trust.ts) over whatever role that left.
 */
export function functionArgs(build: Build, part: string, args: sst.aws.FunctionArgs): sst.aws.FunctionArgs {
  const withDefaults: sst.aws.FunctionArgs = {
    runtime: lambdaRuntime,
    architecture: lambdaArchitecture,
    logging: { format: "json", retention: "1 month" },
    nodejs: nodejsBuild,
    ...args,
  };
  const edited = transformed(
    build.args.transform?.function,
    childName(build, part),
    withDefaults,
    childOpts(build),
  );
  return lambdaTrust(edited);
}
