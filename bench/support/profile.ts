/**
 * Summarizes `node --cpu-prof` profiles (BENCH_CPU_PROF, see processes.ts): `npx tsx bench/support/profile.ts
 * <file or directory>... [--top N] [--match text]` prints, per function (name, file:line), its self and total
 * time as shares of the profile's busy time (idle and the program's own node left out), sorted by self time;
 * `--match` keeps the functions whose name or file contains the text; `--requests N` adds µs per request (N the
 * requests the profiled process served). Several files add up (one gateway's runs).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const top = Number(option('--top') ?? 40);
const match = option('--match');
const requests = Number(option('--requests') ?? 0);
const files = args.flatMap((a) =>
  statSync(a).isDirectory()
    ? readdirSync(a)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(a, f))
    : [a],
);

const IDLE = new Set(['(idle)', '(program)']);
const keyOf = ({ callFrame: f }: ProfileNode) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/src\//, 'src/')}:${f.lineNumber + 1}`;

const self = new Map<string, number>();
const total = new Map<string, number>();
let busy = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const micros = new Map<number, number>();
  profile.samples.forEach((id, i) => micros.set(id, (micros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  // Depth first from the root; a function's total counts each sample once, however deep it recurses.
  const walk = (node: ProfileNode, open: Map<string, number>): number => {
    const key = keyOf(node);
    const own = IDLE.has(node.callFrame.functionName) ? 0 : (micros.get(node.id) ?? 0);
    self.set(key, (self.get(key) ?? 0) + own);
    busy += own;
    open.set(key, (open.get(key) ?? 0) + 1);
    let sum = own;
    for (const child of node.children ?? []) sum += walk(byId.get(child)!, open);
    const depth = open.get(key)! - 1;
    if (depth === 0) {
      open.delete(key);
      total.set(key, (total.get(key) ?? 0) + sum);
    } else open.set(key, depth);
    return sum;
  };
  walk(profile.nodes[0]!, new Map());
}

const rows = [...self.keys()]
  .filter((k) => !match || k.includes(match))
  .sort((a, b) => self.get(b)! - self.get(a)!)
  .slice(0, top)
  .map((k) => ({
    function: k.length > 110 ? `${k.slice(0, 107)}...` : k,
    'self %': Number(((100 * self.get(k)!) / busy).toFixed(2)),
    'total %': Number(((100 * total.get(k)!) / busy).toFixed(2)),
    ...(requests > 0
      ? {
          'self µs/req': Number((self.get(k)! / requests).toFixed(2)),
          'total µs/req': Number((total.get(k)! / requests).toFixed(2)),
        }
      : {}),
  }));
console.log(
  `${files.length} profile(s), busy ${(busy / 1e6).toFixed(2)} s` +
    (requests > 0 ? `, ${(busy / requests).toFixed(1)} µs per request of ${requests}` : ''),
);
console.table(rows);
