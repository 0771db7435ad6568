import { InvariantError } from "../errors.ts";

/**
 * The CloudWatch dashboard body's structure (CloudWatch-Dashboard-Body-Structure) and the grid that
 * places its widgets: what a widget is, how one is drafted, and how lines of drafts become positions.
 * What the dashboard shows is dashboard.ts's.
 */

export type Stat = "Sum" | "Average" | "Maximum" | "Minimum" | "SampleCount" | `p${number}`;
export interface MetricOptions {
  stat?: Stat;
  label?: string;
  yAxis?: "left" | "right";
  period?: number;
}
/** `[namespace, metricName, dimName, dimValue, …, options?]`, dimensions always spelled out. */
export type MetricRow<S> = (string | S | MetricOptions)[];
interface Axis {
  min?: number;
  label?: string;
  showUnits?: boolean;
}
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface TextWidget extends Box {
  type: "text";
  properties: { markdown: string };
}
export interface MetricWidget<S> extends Box {
  type: "metric";
  properties: {
    title: string;
    region: S;
    view: "timeSeries" | "singleValue";
    stacked: boolean;
    stat: Stat;
    period: number;
    metrics: MetricRow<S>[];
    yAxis?: { left?: Axis; right?: Axis };
  };
}
export type DashboardWidget<S> = TextWidget | MetricWidget<S>;
export interface DashboardBody<S> {
  // "inherit": the pool-tasks graph is only a task count at its own 60 s period (see poolTasks in dashboard.ts).
  periodOverride: "inherit";
  widgets: DashboardWidget<S>[];
}

export const GRID_WIDTH = 24;
const HEIGHT = 6;
// One minute is the finest resolution SQS, Lambda, ECS and standard EMF metrics have.
export const PERIOD = 60;

export type Extra<S> = Partial<MetricWidget<S>["properties"]>;
/** A widget before placement: its width on the grid and everything but its position. */
export type Draft<S> = {
  width: number;
  height?: number;
  widget: Omit<TextWidget, keyof Box> | Omit<MetricWidget<S>, keyof Box>;
};

export function row<S>(namespace: string, metricName: string, dims: (string | S)[], options: MetricOptions) {
  return [namespace, metricName, ...dims, options] as MetricRow<S>;
}

export function metricWidget<S>(
  region: S,
  title: string,
  metrics: MetricRow<S>[],
  stat: Stat,
  extra: Extra<S> = {},
): Draft<S> {
  return {
    width: 6,
    widget: {
      type: "metric",
      properties: {
        title,
        region,
        view: "timeSeries",
        stacked: false,
        stat,
        period: PERIOD,
        metrics,
        yAxis: { left: { min: 0 } },
        ...extra,
      },
    },
  };
}

export function fullWidth<S>(markdown: string): Draft<S> {
  return { width: GRID_WIDTH, height: 1, widget: text(markdown) };
}

export function text(markdown: string): Omit<TextWidget, keyof Box> {
  return { type: "text", properties: { markdown } };
}

/** Lines left to right, each starting below the tallest widget of the one before; none overlap. */
export function place<S>(lines: Draft<S>[][]): DashboardWidget<S>[] {
  const out: DashboardWidget<S>[] = [];
  let y = 0;
  for (const line of lines) {
    let x = 0;
    let tallest = 0;
    for (const d of line) {
      const height = d.height ?? HEIGHT;
      if (x + d.width > GRID_WIDTH)
        throw new InvariantError("dashboard: a line is wider than the 24-column grid");
      out.push({ ...d.widget, x, y, width: d.width, height } as DashboardWidget<S>);
      x += d.width;
      tallest = Math.max(tallest, height);
    }
    y += tallest;
  }
  return out;
}
