/**
 * `GET /metrics` read as Prometheus reads it: parsed by parse-prometheus-text-format (which throws on any line that
 * is not Prometheus text). That parser folds a labelled histogram's series into one, so histograms are parsed a
 * second time with their TYPE line as `untyped`: each `_bucket`, `_sum` and `_count` sample then keeps its labels.
 */
import parse from 'parse-prometheus-text-format';

export interface Scrape {
  /** The families, by name, with their TYPE and HELP. */
  families: Map<string, { type: string; help: string }>;
  /** The value of `name`'s sample with exactly `labels` (undefined: none). */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of `name`. */
  samples(name: string): { labels: Record<string, string>; value: number }[];
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`);
  if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4'))
    throw new Error(`GET /metrics answered ${response.headers.get('content-type')}`);
  const families = new Map(parse(text).map((f) => [f.name, { type: f.type, help: f.help }]));
  const samples = new Map<string, { labels: Record<string, string>; value: number }[]>();
  for (const family of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
    const list = samples.get(family.name) ?? [];
    for (const m of family.metrics) list.push({ labels: m.labels ?? {}, value: Number(m.value) });
    samples.set(family.name, list);
  }
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);
  return {
    families,
    samples: (name) => samples.get(name) ?? [],
    value: (name, labels = {}) => samples.get(name)?.find((s) => same(s.labels, labels))?.value,
  };
}
