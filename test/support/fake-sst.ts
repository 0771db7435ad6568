/**
 * Just enough of SST's and Pulumi's globals to evaluate sst.config.ts and infra/ in a test and record
 * what they declare. Every resource records its constructor arguments; any output (arn, url, name,
 * nodes.…) is a reference that prints as "<Type>:<name>.<path>", so tests can see which resource an
 * argument points at. It checks the declarations, not AWS: `npm run check:infra` type-checks the same
 * files against SST's real platform types.
 */
// biome-ignore lint/suspicious/noExplicitAny: recorded SST arguments and outputs are checked field by field.
export type Loose = any;

export interface Declared {
  type: string;
  name: string;
  args: Record<string, Loose>;
  /** Extra calls on the resource: subscribe, route. */
  calls: { method: string; args: Loose[] }[];
}

const PRIMITIVE = Symbol.toPrimitive;

/** A lazily named output: any property is a deeper reference; as a string it is its path. */
export function ref(path: string): Loose {
  return new Proxy(() => {}, {
    get(_t, p) {
      if (p === PRIMITIVE || p === "toString" || p === "toJSON") return () => path;
      if (p === "then") return undefined;
      return ref(`${path}.${String(p)}`);
    },
  });
}

export function installFakeSst(options: { stage: string; dev: boolean }) {
  const declared: Declared[] = [];
  const transforms: ((args: Loose) => void)[] = [];
  const record = (type: string, name: string, args: Loose): Declared => {
    const d = { type, name, args: args ?? {}, calls: [] };
    declared.push(d);
    return d;
  };
  // A constructor function (not a class) so that `new` can hand back the recording proxy.
  const resource = (type: string) =>
    function FakeResource(name: string, args?: Loose) {
      const d = record(type, name, args);
      // $transform(sst.aws.Function, …) reaches every function, including those a cron creates.
      if (type === "sst.aws.Function") for (const t of transforms) t(d.args);
      if (type === "sst.aws.CronV2" && d.args.function) for (const t of transforms) t(d.args.function);
      const short = type.split(".").pop();
      return new Proxy(ref(`${short}:${name}`), {
        get(target, p) {
          if (p === "subscribe")
            return (fn: Loose, opts: Loose) => {
              d.calls.push({ method: "subscribe", args: [fn, opts] });
              for (const t of transforms) t(fn);
              return ref(`${short}:${name}.subscriber`);
            };
          if (p === "route")
            return (...a: Loose[]) => {
              d.calls.push({ method: "route", args: a });
            };
          return target[p];
        },
      });
    };
  const g = globalThis as Loose;
  g.sst = {
    aws: Object.fromEntries(
      ["Dynamo", "Queue", "Function", "ApiGatewayV2", "CronV2", "Vpc", "Cluster", "Service"].map((n) => [
        n,
        resource(`sst.aws.${n}`),
      ]),
    ),
  };
  g.aws = {
    cloudwatch: {
      Dashboard: resource("aws.cloudwatch.Dashboard"),
      MetricAlarm: resource("aws.cloudwatch.MetricAlarm"),
    },
    appautoscaling: { Policy: resource("aws.appautoscaling.Policy") },
    sns: { Topic: resource("aws.sns.Topic"), TopicSubscription: resource("aws.sns.TopicSubscription") },
    getRegionOutput: () => ({ region: "eu-west-1" }),
  };
  g.$app = {
    name: "skyforge",
    stage: options.stage,
    protect: ["prod", "production"].includes(options.stage),
  };
  g.$dev = options.dev;
  g.$config = (config: unknown) => config;
  g.$transform = (_component: unknown, fn: (args: Loose) => void) => transforms.push(fn);
  g.$interpolate = (strings: TemplateStringsArray, ...values: unknown[]) =>
    strings.reduce((out, s, i) => out + s + (i < values.length ? String(values[i]) : ""), "");
  g.$jsonStringify = (value: unknown) => JSON.stringify(value);
  return {
    declared,
    of: (type: string) => declared.filter((d) => d.type === type),
    uninstall() {
      for (const k of [
        "sst",
        "aws",
        "$app",
        "$dev",
        "$config",
        "$transform",
        "$interpolate",
        "$jsonStringify",
      ])
        delete g[k];
    },
  };
}
