import { expect, it } from "vitest";
import { poolEnvironment } from "../../local/pool-process.ts";

/**
 * npm start's pool gets its children's allowlist and its own settings from the developer's
 * environment, and nothing else: a real session token or profile would otherwise sign its emulator
 * calls, and a child running as the pool's user could read them from the pool's environ.
 */
it("the local pool's environment: the allowlist and the pool's settings from the caller's, then the stack's own", () => {
  const env = poolEnvironment({
    baseEnv: {
      PATH: "/usr/local/bin:/usr/bin",
      HOME: "/home/dev",
      LANG: "C.UTF-8",
      AWS_SESSION_TOKEN: "a-real-session-token",
      AWS_ACCESS_KEY_ID: "AKIAREALKEY",
      AWS_SECRET_ACCESS_KEY: "real-secret",
      AWS_PROFILE: "prod-admin",
      GITHUB_TOKEN: "ghp_x",
      SKYFORGE_POOL_CONFIG: "/etc/skyforge/pool.json",
      SKYFORGE_POOL_CHILD_USERS: "required",
      LOG_LEVEL: "INFO",
      SKYFORGE_TABLE: "not-the-stack-table",
    },
    endpoints: { dynamodb: "http://127.0.0.1:1", sqs: "http://127.0.0.1:2" },
    table: "skyforge-jobs",
    queueUrls: new Map([["heavy", "http://127.0.0.1:2/q/heavy"]]),
    dlqUrls: new Map([["heavy", "http://127.0.0.1:2/q/heavy-dlq"]]),
    apiUrl: "http://127.0.0.1:3000",
    realtime: { prefix: "skyforge/local", publishUrl: "http://127.0.0.1:3001" },
    drainSeconds: 10,
    waitSeconds: 2,
  });
  expect(env).toEqual({
    PATH: "/usr/local/bin:/usr/bin",
    HOME: "/home/dev",
    LANG: "C.UTF-8",
    SKYFORGE_POOL_CONFIG: "/etc/skyforge/pool.json",
    SKYFORGE_POOL_CHILD_USERS: "required",
    LOG_LEVEL: "INFO",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:1",
    AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:2",
    AWS_ENDPOINT_URL_S3: "http://127.0.0.1:2",
    SKYFORGE_TABLE: "skyforge-jobs",
    SKYFORGE_CLAIMS_BUCKET: expect.any(String),
    SKYFORGE_QUEUE_URLS: '{"heavy":"http://127.0.0.1:2/q/heavy"}',
    SKYFORGE_DLQ_URLS: '{"heavy":"http://127.0.0.1:2/q/heavy-dlq"}',
    SKYFORGE_POOL_DRAIN_SECONDS: "10",
    SKYFORGE_POOL_WAIT_SECONDS: "2",
    SKYFORGE_API_URL: "http://127.0.0.1:3000",
    // Realtime's publisher, as on AWS, its data-plane endpoint the local broker's publish path.
    SKYFORGE_REALTIME_PREFIX: "skyforge/local",
    SKYFORGE_REALTIME_ENDPOINT: "127.0.0.1",
    AWS_ENDPOINT_URL_IOT_DATA_PLANE: "http://127.0.0.1:3001",
  });
});
