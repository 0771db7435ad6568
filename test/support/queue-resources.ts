import type { QueueResources } from "../../lib/deploy-plan/queue-resources.ts";
import { pascalCase } from "../../lib/deploy-plan/resource-names.ts";

/** Deployed-looking names for the dashboard and alarm builders: Lambda-tier queues plus the pool's. */
export function queueResources(...lambdaQueues: string[]): QueueResources[] {
  return [
    ...lambdaQueues.map((name): QueueResources => {
      const id = pascalCase(name);
      return {
        name,
        tier: "lambda",
        sqsName: `app-dev-${id}Queue`,
        dlqSqsName: `app-dev-${id}Dlq`,
        workerFunctionName: `app-dev-${id}Worker`,
      };
    }),
    { name: "heavy", tier: "pool", sqsName: "app-dev-HeavyQueue", dlqSqsName: "app-dev-HeavyDlq" },
  ];
}
