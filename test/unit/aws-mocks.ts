import { ConditionalCheckFailedException, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { NativeAttributeValue } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";

/**
 * Real SDK v3 clients for unit tests. Their endpoint is a closed local port, so a call that a test
 * forgot to mock fails fast instead of reaching AWS.
 */
const common = {
  region: "us-east-1",
  endpoint: "http://127.0.0.1:9",
  credentials: { accessKeyId: "unit", secretAccessKey: "unit" },
  maxAttempts: 1,
};
export const newDynamoClient = () => new DynamoDBClient(common);
export const newSqsClient = () => new SQSClient(common);

export const queueUrls = new Map([["default", "http://127.0.0.1:9/000000000000/default"]]);

/** DynamoDB's answer to a lost condition; with `item`, as ReturnValuesOnConditionCheckFailure returns it. */
export function conditionalFailure(
  item?: Record<string, NativeAttributeValue>,
): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: "The conditional request failed",
    $metadata: { httpStatusCode: 400 },
    ...(item ? { Item: marshall(item, { removeUndefinedValues: true }) } : {}),
  });
}
