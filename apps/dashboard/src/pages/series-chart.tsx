import { BarChart, LineChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';
import type { ReportSeries } from '../api/types.js';
import { formatCount, formatMicros, microsToChartUnits } from '../format/micros.js';
import { bucketLabel } from '../format/time.js';
import { FIGURES } from './reporting-labels.js';

// Only the parts the dashboard draws (tree-shaken: about a third of the whole library).
echarts.use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, AriaComponent, CanvasRenderer]);

/** ECharts options for a series: four counts on the left axis, earnings as bars on the right. */
export function chartOptions(series: ReportSeries): echarts.EChartsCoreOption {
  const { buckets } = series;
  return {
    animation: false,
    // A short name for screen readers (ECharts' generated one reads every point); the numbers
    // are in the data table beside the chart.
    aria: {
      enabled: true,
      decal: { show: true },
      label: {
        description: `Chart of exposures, clicks, engagements, conversions and earnings in ${buckets.length} ${series.granularity === 'day' ? 'daily' : 'hourly'} buckets, ${series.timezone}. The same numbers are in the data table below the chart.`,
      },
    },
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 56, right: 72, top: 48, bottom: 40, containLabel: true },
    xAxis: { type: 'category', data: buckets.map((b) => bucketLabel(b.start_at, series.granularity, series.timezone)) },
    yAxis: [
      { type: 'value', name: 'Count', minInterval: 1 },
      { type: 'value', name: `Earnings (${series.currency})`, axisLabel: { formatter: (value: number) => value.toLocaleString('en-US') } },
    ],
    series: [
      ...FIGURES.map((figure) => ({
        name: figure.label,
        type: 'line',
        showSymbol: buckets.length <= 48,
        data: buckets.map((b) => b[figure.key]),
        tooltip: { valueFormatter: (value: unknown) => (typeof value === 'number' ? formatCount(value) : String(value)) },
      })),
      {
        name: `Earnings (${series.currency})`,
        type: 'bar',
        yAxisIndex: 1,
        data: buckets.map((b) => microsToChartUnits(b.earnings_micros)),
        // The tooltip reads the exact micros, never the float drawn.
        tooltip: { valueFormatter: (_value: unknown, index: number) => formatMicros(buckets[index]?.earnings_micros ?? 0) },
      },
    ],
  };
}

/** The chart of a report series (canvas; its data is also in the table beside it and in data-series). */
export default function SeriesChart({ series }: { series: ReportSeries }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return undefined;
    const chart = echarts.init(element, undefined, { renderer: 'canvas' });
    chart.setOption(chartOptions(series));
    const observer = new ResizeObserver(() => chart.resize());
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.dispose();
    };
  }, [series]);
  // role="img": ECharts' aria module names the chart (aria-label with a description of the
  // series); the label here stands until it does.
  return <div ref={container} className="chart" data-testid="series-chart" role="img" aria-label={`Chart of ${series.buckets.length} buckets`} />;
}
