import type { SSMClient } from "@aws-sdk/client-ssm";
import { ConfigError } from "../errors.ts";
import { onFirstUse } from "./first-use.ts";

/**
 * The stack's realtime secret on AWS (docs/architecture.md §25): a SecureString parameter, read
 * with decryption once per cold start, on first need (the API when it mints a token, the authorizer
 * when it checks one), never from the environment. The SSM package is loaded with it. A failed read
 * is not kept: the next call reads again.
 */
const ssmPackage = () => import("@aws-sdk/client-ssm");

export function ssmSecret(
  parameter: string,
  make: (sdk: typeof import("@aws-sdk/client-ssm")) => SSMClient = (sdk) => new sdk.SSMClient({}),
): () => Promise<string> {
  return onFirstUse(async () => {
    const sdk = await ssmPackage();
    const answer = await make(sdk).send(
      new sdk.GetParameterCommand({ Name: parameter, WithDecryption: true }),
    );
    const secret = answer.Parameter?.Value;
    if (!secret) throw new ConfigError(`the realtime secret parameter ${parameter} has no value`);
    return secret;
  });
}
