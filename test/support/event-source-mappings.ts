import type { LambdaResponder } from "./aws-call-recorder.ts";

export interface MappingState {
  enabled: boolean;
  maxConcurrency: number;
}

/**
 * Lambda's event source mappings, as far as the API and the reaper use them: GetEventSourceMapping
 * and UpdateEventSourceMapping on a UUID, answered in Lambda's REST shape. There is no Lambda
 * emulator to forward these to, so this answers them; `state` lets a test move a mapping behind
 * the functions' backs (drift the reaper should repair).
 */
export class EventSourceMappings {
  readonly state = new Map<string, MappingState>();

  private readonly region: string;
  private readonly account: string;

  constructor(region: string, account: string) {
    this.region = region;
    this.account = account;
  }

  add(uuid: string, initial: MappingState): void {
    this.state.set(uuid, { ...initial });
  }

  arnOf(uuid: string): string {
    return `arn:aws:lambda:${this.region}:${this.account}:event-source-mapping:${uuid}`;
  }

  readonly respond: LambdaResponder = ({ method, path, body }) => {
    const uuid = decodeURIComponent(/\/event-source-mappings\/([^/?]+)/.exec(path)?.[1] ?? "");
    const mapping = this.state.get(uuid);
    if (!mapping) {
      return {
        status: 404,
        body: {
          Type: "User",
          message: `The resource you requested does not exist. (Service: Lambda, UUID: ${uuid})`,
        },
      };
    }
    if (method === "PUT") {
      const update = JSON.parse(body || "{}") as {
        Enabled?: boolean;
        ScalingConfig?: { MaximumConcurrency?: number };
      };
      if (update.Enabled !== undefined) mapping.enabled = update.Enabled;
      if (update.ScalingConfig?.MaximumConcurrency !== undefined)
        mapping.maxConcurrency = update.ScalingConfig.MaximumConcurrency;
      return { status: 202, body: this.describe(uuid, mapping, mapping.enabled ? "Enabling" : "Disabling") };
    }
    if (method === "GET") return { status: 200, body: this.describe(uuid, mapping) };
    return { status: 400, body: { Type: "User", message: `${method} is not answered here` } };
  };

  private describe(uuid: string, m: MappingState, state = m.enabled ? "Enabled" : "Disabled") {
    return {
      UUID: uuid,
      EventSourceMappingArn: this.arnOf(uuid),
      State: state,
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: m.maxConcurrency },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      LastModified: Date.now() / 1000,
    };
  }
}
