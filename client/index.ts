/**
 * The producer client as a package (packages/client, `@skyforge/client`): what a project outside
 * this repo imports. Lambda Invoke, which needs the AWS SDK's Lambda client, is its own entry
 * (client/invoke.ts, `@skyforge/client/invoke`), so the HTTP path loads none of it.
 */
export type { AppTypes, AppTypesNames } from "./app-types.ts";
export { type ClientOptions, createClient } from "./create-client.ts";
export {
  isSkyforgeApiError,
  isSkyforgeTransportError,
  SkyforgeApiError,
  SkyforgeClientError,
  SkyforgeTransportError,
} from "./errors.ts";
export { type Credentials, type HttpTransportOptions, httpTransport } from "./http-transport.ts";
export type {
  BusiestKeys,
  BusyKey,
  CancelOutcome,
  Enqueued,
  EnqueueItem,
  EnqueueManyError,
  EnqueueManyResult,
  EnqueueOptions,
  FlowKeyView,
  GroupRequest,
  JobPage,
  JobSteps,
  ListOptions,
  QueuePatch,
  QueueView,
  ReplayOptions,
  ScheduleInput,
  ScheduleView,
  SearchOptions,
  SkyforgeClient,
  StepView,
  TokenCompleted,
  TokenView,
  TraceOptions,
  WaitingView,
} from "./skyforge-client.ts";
export type { ApiRequest, ApiResponse, Transport } from "./transport.ts";
export {
  type AppNames,
  type BatchResultItem,
  type ErrorBody,
  type ErrorCode,
  errorCodes,
  type GroupChildrenPage,
  type GroupChildStatus,
  type GroupView,
  type JobStatus,
  type JobSummary,
  type JobView,
  jobStatuses,
  MAX_BATCH,
  MAX_PAYLOAD_BYTES,
  type ReplayAnswer,
} from "./vocabulary.ts";
