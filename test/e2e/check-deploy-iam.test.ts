import { describe, expect, test } from "vitest";
import { useCheckDeployCopy } from "../support/check-deploy-copy.ts";

/**
 * The offline deploy proof must fail when the infra is broken on purpose. Each case edits one infra
 * file in a copy of the project, runs SST's real components on it for one stage, and expects the
 * named failure; the untouched copy must pass first (test/e2e/check-deploy.test.ts), so a failure
 * can only come from the edit. The cases are split over three files, each with its own copy, so
 * they run beside each other: here, the roles: their grants, trust and managed policies.
 */

const project = useCheckDeployCopy("skyforge-check-deploy-iam-");

describe("check:deploy on SST's own components: roles", () => {
  test("adding a link fails: it grants more than the plan", async () => {
    const failures = await project.failuresAfter(
      "infra/workers.ts",
      "handler: build.handlers.worker,",
      "handler: build.handlers.worker,\n          link: [queue],",
    );
    expect(failures).toContainEqual(expect.stringMatching(/role .*\(worker\): extra statement .*sqs:\*/));
  }, 60_000);

  test("widening a grant fails", async () => {
    const failures = await project.failuresAfter(
      "infra/permissions.ts",
      'case "table":\n      return table.arn;',
      'case "table":\n      return "*";',
    );
    expect(failures).toContainEqual(expect.stringMatching(/wildcard resource \*$/));
  }, 60_000);

  test("a role that trusts more than its service fails", async () => {
    // Without the override, SST's `sst dev` policy comes back: the whole account may assume the roles.
    const defaults = await project.failuresAfter(
      "infra/role-trust.ts",
      "args.assumeRolePolicy = serviceTrust(service);",
      "",
    );
    expect(defaults).toContainEqual(
      expect.stringMatching(/role JobsReaperHandlerRole \(lambda\): trusts .*arn:aws:iam::123456789012:root/),
    );
    const widened = await project.failuresAfter(
      "infra/role-trust.ts",
      "Principal: { Service: service },",
      'Principal: { Service: service, AWS: "*" },',
    );
    for (const kind of ["lambda", "pool task", "pool execution", "schedule"]) {
      expect(widened).toContainEqual(
        expect.stringMatching(new RegExp(`\\(${kind}\\): trusts .*"AWS":\\["\\*"\\]`)),
      );
    }
  }, 90_000);

  test("a managed policy more fails", async () => {
    const failures = await project.failuresAfter(
      "infra/schedules.ts",
      "handler: build.handlers.reaper,",
      'handler: build.handlers.reaper,\n    policies: ["arn:aws:iam::aws:policy/AdministratorAccess"],',
    );
    expect(failures).toContainEqual(
      expect.stringMatching(/role JobsReaperHandlerRole \(lambda\): managed policies .*AdministratorAccess/),
    );
  }, 60_000);

  test("the token callback's function granted more than its narrow list fails", async () => {
    const wider = await project.failuresAfter(
      "infra/api.ts",
      'permissions: permissionsFor(build, targets, "token-callback"),',
      'permissions: permissionsFor(build, targets, "enqueue"),',
    );
    expect(wider).toContainEqual(
      expect.stringMatching(/role JobsCallback\w* \(token-callback\): extra statement .*dynamodb:PutItem/),
    );
    // Without its conditions, its table grants would reach every item and every attribute of it, not
    // only what a token's completion and its job's resume write.
    const anyKey = await project.failuresAfter(
      "infra/permissions.ts",
      "...(g.conditions",
      "...(false && g.conditions",
    );
    expect(anyKey).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): extra statement \{"Effect":"Allow","Action":\["dynamodb:UpdateItem"\],"Resource":\["[^"]+"\]\}$/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*"dynamodb:Attributes":\["gsi1pk","gsi1sk","pk","promotingUntil","runAt","sk","waiting"\].*"dynamodb:LeadingKeys":\["job#\*"\].*"dynamodb:ReturnValues":\["NONE"\]/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*"dynamodb:Attributes":\["completedAt","o","pk","secretHash","sk","status","timeoutAt","v"\].*"dynamodb:LeadingKeys":\["tok#\*"\]/,
        ),
      ]),
    );
    // Its objects widened to the whole claims prefix: it could overwrite any job's payload or result.
    const anyObject = await project.failuresAfter(
      "infra/permissions.ts",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: infra/permissions.ts's source text, matched literally.
      "return $interpolate`${claims.arn}/${TOKEN_OBJECTS_PATTERN}`;",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "return $interpolate`${claims.arn}/${CLAIMS_PREFIX}*`;",
    );
    expect(anyObject).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): extra statement .*s3:PutObject.*\/claims\/\*"\]\}$/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*s3:PutObject.*\/claims\/\*\/token-\*"\]\}$/,
        ),
      ]),
    );
  }, 120_000);
});
