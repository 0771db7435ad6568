/**
 * The service's words a program built on the client needs, in one place: the CLI and the console
 * import them from here, never from lib/, so they reach skyforge only through the client
 * (docs/architecture.md §14). Each is defined once, in lib/'s model.
 */
export type { AppNames } from "../lib/declarations/app-names.ts";
export { type MisfirePolicy, misfirePolicies } from "../lib/declarations/schedule-declaration.ts";
export { CODE_CHANGE_PAUSE } from "../lib/durable-errors.ts";
export {
  ClientError,
  type ErrorBody,
  type ErrorCode,
  errorCodes,
  internalErrorBody,
} from "../lib/errors.ts";
export { type FlowKey, flowKey, flowKeyPath } from "../lib/job/flow-key.ts";
export type { BusiestKeys, BusyKey, FlowKeyView } from "../lib/job/flow-views.ts";
export {
  type GroupChildrenPage,
  type GroupChildStatus,
  type GroupView,
  groupChildStatuses,
} from "../lib/job/group-schemas.ts";
export { fixtureProblem, journalFixture, tokenIdsOf } from "../lib/job/journal-fixture.ts";
export {
  MAX_REPLAY,
  MAX_REPLAY_IDS,
  type ReplayAnswer,
  replayableStatuses,
} from "../lib/job/replay-schemas.ts";
export {
  type BatchResultItem,
  type JobSummary,
  type JobView,
  type ListView,
  listViews,
  MAX_BATCH,
  MAX_PAYLOAD_BYTES,
} from "../lib/job/schemas.ts";
export { type JobStatus, jobStatuses } from "../lib/job/status.ts";
