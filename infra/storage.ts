import { statusIndex, tableKeys, ttlAttribute } from "../lib/store/table";

/**
 * The jobs table: one sparse status index (scheduled + dead only), TTL on terminal items. SST makes
 * every Dynamo table on-demand with point-in-time recovery; production also gets deletion protection.
 */
export const table = new sst.aws.Dynamo("Jobs", {
  fields: {
    [tableKeys.hashKey]: "string",
    [tableKeys.rangeKey]: "string",
    [statusIndex.hashKey]: "string",
    [statusIndex.rangeKey]: "string",
  },
  primaryIndex: { hashKey: tableKeys.hashKey, rangeKey: tableKeys.rangeKey },
  globalIndexes: { [statusIndex.name]: { hashKey: statusIndex.hashKey, rangeKey: statusIndex.rangeKey } },
  ttl: ttlAttribute,
  deletionProtection: $app.protect,
});
