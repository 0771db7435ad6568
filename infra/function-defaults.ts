/**
 * How every Lambda function is built and run: the component gives these to each sst.aws.Function
 * it creates (infra/lambda-function.ts), and the offline deploy proof (scripts/deploy/) bundles
 * with exactly the same settings.
 *
 * The AWS SDK v3 is left to the nodejs24.x runtime, which ships it: bundled, it was two thirds of
 * every bundle (about 650 KiB against about 200 KiB without it) and the cold-start budget is
 * 400 KiB. The SDK behaviour skyforge relies on is listed in docs/architecture.md (deploy proof).
 *
 * keepNames off (SST turns it on): its `__name(fn, "…")` call on every named function and class is
 * work at every cold start (13–25 ms of CPU on the worker's import, and 25 KiB; docs/guide/performance.md),
 * and nothing in skyforge reads a function's or class's name (its errors name themselves).
 */
export const lambdaRuntime = "nodejs24.x" as const;
export const lambdaArchitecture = "arm64" as const;

export const nodejsBuild = {
  minify: true,
  format: "esm" as const,
  esbuild: { external: ["@aws-sdk/*"], keepNames: false },
};
