import type { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import type { DoctorAlarm } from "./doctor-findings.ts";

/** Pages DescribeAlarms reads at most (100 alarms each): a stage has a handful per queue. */
const MAX_PAGES = 10;

/**
 * The names infra gives a stage's alarms (infra/monitoring.ts): `<app>-<stage>-<id>`. The app is
 * sst.config.ts's name.
 */
export const stageAlarmPrefix = (stage: string, app = "skyforge") => `${app}-${stage}-`;

/**
 * The stage's alarms (metric and composite) in state ALARM: DescribeAlarms by the stage's name
 * prefix, signed by the usual AWS credential chain in the stage's region, as the CLI's other calls.
 */
export async function stageAlarmsInAlarm(
  cloudwatch: Pick<CloudWatchClient, "send">,
  stage: string,
): Promise<DoctorAlarm[]> {
  const { DescribeAlarmsCommand, StateValue } = await cloudWatchSdk();
  const alarms: DoctorAlarm[] = [];
  let NextToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const out = await cloudwatch.send(
      new DescribeAlarmsCommand({
        AlarmNamePrefix: stageAlarmPrefix(stage),
        StateValue: StateValue.ALARM,
        AlarmTypes: ["MetricAlarm", "CompositeAlarm"],
        MaxRecords: 100,
        ...(NextToken ? { NextToken } : {}),
      }),
    );
    for (const a of [...(out.MetricAlarms ?? []), ...(out.CompositeAlarms ?? [])])
      alarms.push({
        name: a.AlarmName ?? "?",
        ...(a.StateReason ? { reason: a.StateReason } : {}),
        ...(a.StateUpdatedTimestamp ? { since: a.StateUpdatedTimestamp.toISOString() } : {}),
      });
    NextToken = out.NextToken;
    if (!NextToken) break;
  }
  return alarms;
}

/** A CloudWatch client for a stage's region. */
export const cloudWatchFor = async (region: string) =>
  new (await cloudWatchSdk()).CloudWatchClient({ region });

/** The CloudWatch SDK, imported when doctor checks a stage: slow to load, and no other command needs it. */
const cloudWatchSdk = () => import("@aws-sdk/client-cloudwatch");
