/** Charts on uPlot (canvas, about 20 KB gzipped, bundled): a time series of several lines and a bar chart of places. */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLOURS = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#ca8a04',
  '#db2777',
  '#4b5563',
  '#65a30d',
];
const HEIGHT = 260;

/** Lines over time: `times` in seconds since the epoch, one series of values per label. */
export function lineChart(
  target: HTMLElement,
  width: number,
  { times, series, unit }: { times: number[]; series: { label: string; values: number[] }[]; unit: string },
): uPlot {
  return new uPlot(
    {
      width,
      height: HEIGHT,
      scales: { x: { time: true } },
      axes: [{}, { label: unit, size: 60 }],
      series: [
        {},
        ...series.map(({ label }, i) => ({
          label,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          points: { show: times.length < 40 },
        })),
      ],
    },
    [times, ...series.map((s) => s.values)],
    target,
  );
}

/** Bars, one per label (a `category`: place, ad), in the order given. */
export function barChart(
  target: HTMLElement,
  width: number,
  { labels, values, label, category }: { labels: string[]; values: number[]; label: string; category: string },
): uPlot {
  const xs = labels.map((_, i) => i);
  return new uPlot(
    {
      width,
      height: HEIGHT,
      scales: {
        x: { time: false, range: [-0.5, labels.length - 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
      axes: [
        {
          splits: () => xs,
          values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
          rotate: labels.length > 6 ? -30 : 0,
          size: labels.length > 6 ? 80 : 40,
        },
        { label, size: 60 },
      ],
      series: [
        { label: category, value: (_u, i) => (i === null ? '' : (labels[i] ?? '')) },
        {
          label,
          fill: COLOURS[0],
          stroke: COLOURS[0],
          paths: uPlot.paths.bars!({ size: [0.6, 80] }),
          points: { show: false },
        },
      ],
      legend: { show: true },
    },
    [xs, values],
    target,
  );
}
