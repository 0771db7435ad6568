/**
 * Who may assume each role the component's resources create: only the AWS service that runs it,
 * and only on behalf of this account (aws:SourceAccount, AWS's guard against a confused deputy in
 * another account).
 *
 * SST's Function builds its role's trust policy with `!dev`, where `dev` is a Pulumi Output, so
 * every stage got the `sst dev` policy, which also trusts `arn:aws:iam::<account>:root`: any
 * principal of the account that may call sts:AssumeRole could take a function's grants. Under
 * `sst dev` that principal is needed (the CLI runs functions and the pool on the developer's machine
 * with their roles' credentials), so SST's own policy stays there; everywhere else the role
 * transforms below replace it, on each function, schedule and service the component creates (not
 * through `$transform`, which would reach the user's own resources too). `npm run check:deploy`
 * holds each rendered role to exactly this.
 */

type TrustedService = "lambda.amazonaws.com" | "ecs-tasks.amazonaws.com" | "scheduler.amazonaws.com";
/** SST's Transform<aws.iam.RoleArgs>: partial args to merge, or a function that edits them. */
type RoleTransform = NonNullable<NonNullable<sst.aws.FunctionArgs["transform"]>["role"]>;

/** A trust policy naming one service, for this account's resources only. */
function serviceTrust(service: TrustedService): $util.Output<string> {
  return $jsonStringify({
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { Service: service },
        Action: "sts:AssumeRole",
        Condition: { StringEquals: { "aws:SourceAccount": aws.getCallerIdentityOutput().accountId } },
      },
    ],
  });
}

/** The resource's own role transform first (object or function), then the trust policy over it. */
function trusting(service: TrustedService, inner: RoleTransform | undefined): RoleTransform {
  return (args, opts, name) => {
    if (typeof inner === "function") inner(args, opts, name);
    else if (inner) Object.assign(args, inner);
    args.assumeRolePolicy = serviceTrust(service);
    return undefined;
  };
}

/** A function's args with its role trusting Lambda alone (SST's policy under `sst dev`). */
export function lambdaTrust(args: sst.aws.FunctionArgs): sst.aws.FunctionArgs {
  if ($dev) return args;
  return {
    ...args,
    transform: { ...args.transform, role: trusting("lambda.amazonaws.com", args.transform?.role) },
  };
}

/** A schedule's args with its own role trusting EventBridge Scheduler alone. */
export function scheduleTrust(args: sst.aws.CronV2Args): sst.aws.CronV2Args {
  return {
    ...args,
    transform: { ...args.transform, role: trusting("scheduler.amazonaws.com", args.transform?.role) },
  };
}

/** The pool service's args with its roles trusting ECS tasks alone (the task role keeps SST's under `sst dev`). */
export function poolTrust(args: sst.aws.ServiceArgs): sst.aws.ServiceArgs {
  return {
    ...args,
    transform: {
      ...args.transform,
      executionRole: trusting("ecs-tasks.amazonaws.com", args.transform?.executionRole),
      // Under `sst dev` the pool runs locally with the task role's credentials: SST's policy stays.
      ...($dev ? {} : { taskRole: trusting("ecs-tasks.amazonaws.com", args.transform?.taskRole) }),
    },
  };
}
