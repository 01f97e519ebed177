/** parse-prometheus-text-format ships no types: its one function, as test/support/prometheus.ts uses it. */
declare module 'parse-prometheus-text-format' {
  interface Sample {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface MetricFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  /** Throws on a line that is not Prometheus text. */
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
