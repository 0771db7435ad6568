import { type LocalStack, type LocalStackOptions, startLocalStack } from "../../local/stack.ts";
import { forFile } from "./for-file.ts";

/**
 * The local stack for the whole file, on a free port with its tick timer off: a test that needs a
 * tick drives `ticker.tick()` itself. Started before the file's first test, stopped after its last.
 */
export function localStackForFile(options: Omit<LocalStackOptions, "port" | "autoTick">): () => LocalStack {
  return forFile(
    "the stack",
    () => startLocalStack({ ...options, port: 0, autoTick: false }),
    (stack) => stack.stop(),
  );
}

/**
 * The local stack for the whole file with its tick timer on, as `npm start` runs it (every
 * `tickSeconds`, its SKYFORGE_TICK_SECONDS): for a file that checks what the ticks do by themselves
 * (schedules firing, long delays promoted) rather than driving them.
 */
export function tickingStackForFile(
  options: Omit<LocalStackOptions, "port" | "autoTick"> & { tickSeconds: number },
): () => LocalStack {
  return forFile(
    "the stack",
    () => startLocalStack({ ...options, port: 0 }),
    (stack) => stack.stop(),
  );
}

/** One SQS request the stack is about to send. */
export interface SqsRequest {
  command: string;
  input: object;
}

/**
 * A stack's `instrument` that hands every SQS request to `around` before it is sent: `send` sends
 * it. `name` names the middleware, so a stack trace says which test's hook it was.
 */
export function aroundSqsRequests(
  name: string,
  around: <T>(request: SqsRequest, send: () => Promise<T>) => Promise<T>,
): NonNullable<LocalStackOptions["instrument"]> {
  return ({ sqs }) => {
    sqs.middlewareStack.add(
      (next, context) => (args) =>
        around({ command: context.commandName ?? "?", input: args.input as object }, () => next(args)),
      { step: "initialize", name },
    );
  };
}
