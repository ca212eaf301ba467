// One uPlot chart over time, sized to its container. The canvas is a picture to screen readers (role=img
// with a summary); the legend is plain HTML next to it, and the screen shows the same numbers in a table.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  /** One value per x; null leaves a gap (a bucket without receipts has no rate). */
  values: (number | null)[];
  /** Shown in the legend and the tooltip-free summary instead of the plotted value (stacked bars plot sums). */
  kind: 'line' | 'bars';
}

export interface ChartProps {
  id: string;
  title: string;
  /** What the chart shows, for screen readers (the table has the numbers). */
  summary: string;
  /** Bucket starts, seconds since the epoch (UTC). */
  x: number[];
  series: ChartSeries[];
  unit: 'percent' | 'count';
  height?: number;
}

const bars = uPlot.paths.bars!({ size: [0.7, 48], gap: 1 });

export function TimeChart({ id, title, summary, x, series, unit, height = 240 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // Dates on the x axis are UTC days, as the buckets are.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: {
        x: { time: true, range: (_u, min, max) => (x.length === 1 || series.some((s) => s.kind === 'bars') ? [min - 43_200, max + 43_200] : [min, max]) },
        y: unit === 'percent' ? { range: [0, 100] } : { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
      },
      axes: [
        { stroke: '#5a6470', grid: { stroke: '#e6e9ed' }, ticks: { stroke: '#d4d9df' } },
        {
          stroke: '#5a6470',
          grid: { stroke: '#e6e9ed' },
          ticks: { stroke: '#d4d9df' },
          values: (_u, ticks) => ticks.map((t) => (unit === 'percent' ? `${t}%` : Number.isInteger(t) ? String(t) : '')),
        },
      ],
      series: [
        {},
        ...series.map((s) =>
          s.kind === 'bars'
            ? { label: s.label, stroke: s.color, fill: s.color, width: 0, paths: bars, points: { show: false } }
            : { label: s.label, stroke: s.color, width: 2, points: { show: true, size: 6, fill: s.color } },
        ),
      ],
    };
    const plot = new uPlot(options, [x, ...series.map((s) => s.values)], element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, unit, height]);

  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`} className="chart-title">
        {title}
      </figcaption>
      <div ref={box} className="chart-canvas" role="img" aria-label={`${title}. ${summary}`} />
      <ul className="legend" aria-label={`${title}: legend`}>
        {series.map((s) => (
          <li key={s.label}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
    </figure>
  );
}
