/**
 * What `new Skyforge(name, args)` takes (infra/skyforge.ts). Each option replaces a deploy-time
 * variable the repository's own infra read before the component existed: `alarms` for
 * SKYFORGE_ALARM_TOPIC_ARN / SKYFORGE_ALARM_EMAIL, `pool.config` for SKYFORGE_POOL_CONFIG,
 * `throttle` for the API's throttle settings.
 */
import type { ThrottleOptions } from "../lib/deploy-plan/api-throttle";

/**
 * SST's own convention for changing how a component creates a resource: partial args merged over
 * the component's (shallow), or a function that edits them in place.
 */
export type Transform<T> =
  | Partial<T>
  | ((args: T, opts: $util.CustomResourceOptions, name: string) => undefined);

export interface SkyforgeArgs {
  /**
   * The app module, relative to the project root: the file that exports the `defineApp` value as
   * `default` or as `app`. Every function runs this app's kinds.
   */
  app: string;
  /**
   * Where the alarms notify. `topic`: an existing SNS topic's ARN. `email`: an address the
   * component subscribes to a topic of its own (AWS mails a confirmation link first). Neither:
   * alarms only change state on the dashboard.
   */
  alarms?: { topic?: $util.Input<string>; email?: string };
  /** The Fargate pool, created when the app declares pool kinds (or `config` adds some). */
  pool?: {
    /**
     * A JSON file, relative to the project root, that adds or overrides pool kinds: the image and
     * the functions that enqueue get it too. Under `children/` (the folder the image copies).
     */
    config?: string;
    /**
     * The pool task's image: its build context and Dockerfile, relative to the project root. By
     * default this repository's infra/pool.Dockerfile, which bundles functions/pool/main.ts.
     */
    image?: { context: string; dockerfile: string };
    /** The most tasks the backlog may scale the pool to (10 by default); at rest it runs none. */
    maxTasks?: number;
  };
  /**
   * The HTTP API's throttles (lib/deploy-plan/api-throttle.ts): `routes`, every IAM route (1 000 a
   * second, bursts of 2 000 by default); `tokenCallback`, `POST /tokens/{id}` (20 a second, bursts of
   * 30) and its function's reserved concurrency (50; at least burst + rate). Callers over a throttle
   * get API Gateway's 429.
   */
  throttle?: ThrottleOptions;
  /** Changes how the component creates its resources, each as SST's components take `transform`. */
  transform?: {
    table?: Transform<sst.aws.DynamoArgs>;
    claims?: Transform<sst.aws.BucketArgs>;
    /** Each declared queue's SQS queue. */
    queue?: Transform<sst.aws.QueueArgs>;
    /** Each declared queue's dead-letter queue. */
    dlq?: Transform<sst.aws.QueueArgs>;
    api?: Transform<sst.aws.ApiGatewayV2Args>;
    /** Every Lambda function: workers, enqueue, the API's, the token callback's and the schedules'. */
    function?: Transform<sst.aws.FunctionArgs>;
    /** The three schedules (reaper, cleanup, cron). */
    schedule?: Transform<sst.aws.CronV2Args>;
    pool?: Transform<sst.aws.ServiceArgs>;
    dashboard?: Transform<aws.cloudwatch.DashboardArgs>;
    alarm?: Transform<aws.cloudwatch.MetricAlarmArgs>;
  };
}

/** A transform applied to args before the resource is created: SST's rule, a shallow merge or an edit. */
export function transformed<T extends object>(
  transform: Transform<T> | undefined,
  name: string,
  args: T,
  opts: $util.CustomResourceOptions,
): T {
  if (typeof transform === "function") {
    transform(args, opts, name);
    return args;
  }
  return transform ? { ...args, ...transform } : args;
}
