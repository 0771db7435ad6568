/**
 * `@skyforge/client/invoke`: the Lambda Invoke transport, and a deployed stage's client from the
 * outputs SST wrote (either transport). Its own entry because it loads `@aws-sdk/client-lambda`,
 * an optional peer dependency of the package (packages/client/README.md).
 */
export { type InvokeTransport, type InvokeTransportOptions, invokeTransport } from "./invoke-transport.ts";
export {
  clientForStage,
  type OutputsTransportOptions,
  type StageOutputs,
  StageOutputsError,
  type StageOutputsOptions,
  type StageTransportOptions,
  stageOutputs,
  transportForOutputs,
  transportForStage,
} from "./stage-outputs.ts";
