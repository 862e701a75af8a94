/**
 * A line chart of daily series on uPlot (canvas; its stylesheet is bundled, it styles through
 * the CSSOM only, which the CSP's style-src 'self' allows). The chart follows its box's width,
 * so it fits 360 px and a desktop alike. A text summary beside it carries the same numbers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

export function SeriesChart(props: { title: string; timestamps: number[]; series: Series[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      title: undefined,
      width: Math.max(280, el.clientWidth),
      height: props.height ?? 260,
      scales: { x: { time: true } },
      axes: [{}, { size: 48 }],
      series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: props.timestamps.length < 40 } }))],
    };
    const data: uPlot.AlignedData = [props.timestamps.map((t) => t / 1000), ...props.series.map((s) => s.values)];
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: opts.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.timestamps, props.series, props.height]);
  return <div class="chart" ref={box} role="img" aria-label={props.title} />;
}
