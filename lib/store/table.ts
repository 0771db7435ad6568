/**
 * The one table's shape. Infra declares it from these constants and the local stack creates it with
 * `createTableInput`, so both always agree.
 */
export const tableKeys = { hashKey: "pk", rangeKey: "sk" } as const;
export const statusIndex = { name: "byStatus", hashKey: "gsi1pk", rangeKey: "gsi1sk" } as const;
export const ttlAttribute = "expiresAt";
/**
 * Unfinished groups spread over this many index partitions (a group enters, moves and leaves the
 * index a few times in its life, not per child). A job's status-index shards follow the app's rate
 * instead: StoreContext.layout.indexShards.
 */
export const GROUP_INDEX_SHARDS = 8;

export function createTableInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST" as const,
    AttributeDefinitions: [
      { AttributeName: tableKeys.hashKey, AttributeType: "S" as const },
      { AttributeName: tableKeys.rangeKey, AttributeType: "S" as const },
      { AttributeName: statusIndex.hashKey, AttributeType: "S" as const },
      { AttributeName: statusIndex.rangeKey, AttributeType: "S" as const },
    ],
    KeySchema: [
      { AttributeName: tableKeys.hashKey, KeyType: "HASH" as const },
      { AttributeName: tableKeys.rangeKey, KeyType: "RANGE" as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: statusIndex.name,
        KeySchema: [
          { AttributeName: statusIndex.hashKey, KeyType: "HASH" as const },
          { AttributeName: statusIndex.rangeKey, KeyType: "RANGE" as const },
        ],
        Projection: { ProjectionType: "ALL" as const },
      },
    ],
  };
}
