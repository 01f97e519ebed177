/**
 * The wall of the scripts' headers: every script under src/redis/<domain>/ opens with a `--[[ ]]` block naming
 * itself, listing its KEYS and ARGV one per line (a `[n..]` line for a variable tail), and saying what it returns;
 * the body reads only what the header lists, under the names the header gives, and never indexes ARGV by arithmetic
 * (a structured variable part is packed into one argument). README "Layout" describes the form.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/entries.js';

const DIR = path.join(ROOT, 'src', 'redis');

interface Entry {
  index: number;
  range: boolean;
  name: string;
}

interface Header {
  title: string;
  keys: Entry[];
  argv: Entry[];
  returns: boolean;
  body: string;
}

function parse(source: string): Header | string {
  const open = /^--\[\[\n([\s\S]*?)\n\]\]\n/.exec(source);
  if (!open) return 'opens with no --[[ ]] header block';
  const lines = open[1]!.split('\n').map((l) => l.trim());
  const header: Header = {
    title: lines.find(Boolean) ?? '',
    keys: [],
    argv: [],
    returns: false,
    body: source.slice(open[0].length),
  };
  for (const line of lines) {
    const entry = /^(KEYS|ARGV)\[(\d+)(\.\.)?\]\s+([A-Za-z_]\w*)/.exec(line);
    if (entry)
      (entry[1] === 'KEYS' ? header.keys : header.argv).push({
        index: Number(entry[2]),
        range: entry[3] === '..',
        name: entry[4]!,
      });
    if (/^Returns\b/.test(line)) header.returns = true;
  }
  return header;
}

/** What is wrong with a list of header entries: fixed ones numbered 1..n in order, then at most one tail `[n+1..]`. */
function checkEntries(what: string, entries: Entry[]): string[] {
  const problems: string[] = [];
  entries.forEach((e, i) => {
    if (e.index !== i + 1) problems.push(`${what}[${e.index}] is listed where ${what}[${i + 1}] belongs`);
    if (e.range && i !== entries.length - 1) problems.push(`${what}[${e.index}..] is not the last ${what} line`);
  });
  return problems;
}

/** `local a, b = KEYS[1], tonumber(ARGV[2])`: each name bound to one KEYS or ARGV entry, as [name, kind, index]. */
function bindings(body: string): [string, string, number][] {
  const out: [string, string, number][] = [];
  for (const m of body.matchAll(/^local ([\w, ]+?)\s*=\s*((?:.*(?:KEYS|ARGV)\[\d+\].*\n?)+?)(?=^\S|^$)/gm)) {
    const names = m[1]!.split(',').map((n) => n.trim());
    const values = splitTopLevel(m[2]!.replace(/\n\s*/g, ' '));
    names.forEach((name, i) => {
      const refs = [...(values[i] ?? '').matchAll(/(KEYS|ARGV)\[(\d+)\]/g)];
      if (refs.length === 1) out.push([name, refs[0]![1]!, Number(refs[0]![2])]);
    });
  }
  return out;
}

function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of list) {
    if (c === '(' || c === '{' || c === '[') depth++;
    if (c === ')' || c === '}' || c === ']') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  return [...parts, current].map((p) => p.trim());
}

function problemsOf(file: string): string[] {
  const match = /^([A-Za-z]\w*?)(?:-(\d+))?\.lua$/.exec(path.basename(file))!;
  const [, name, fixedKeys] = match;
  const header = parse(readFileSync(file, 'utf8'));
  if (typeof header === 'string') return [header];
  const problems = [...checkEntries('KEYS', header.keys), ...checkEntries('ARGV', header.argv)];
  if (!header.title.startsWith(`${name}:`)) problems.push(`the header's first line does not start with "${name}:"`);
  if (!header.returns) problems.push('the header has no "Returns" line');
  const fixed = header.keys.filter((e) => !e.range).length;
  const keysTail = header.keys.some((e) => e.range);
  const argvTail = header.argv.some((e) => e.range);
  const argvFixed = header.argv.filter((e) => !e.range).length;
  if (fixedKeys !== undefined) {
    if (fixed !== Number(fixedKeys) || keysTail)
      problems.push(`a script named -${fixedKeys} lists exactly ${fixedKeys} KEYS and no [n..] tail`);
  } else if (!keysTail) problems.push('a script whose keys vary (<name>.lua) lists its KEYS tail as KEYS[n..]');

  const code = header.body.replace(/--.*$/gm, '');
  for (const [, kind, index] of code.matchAll(/\b(KEYS|ARGV)\[(\d+)\]/g)) {
    const listed = kind === 'KEYS' ? header.keys : header.argv;
    if (!listed.some((e) => e.index === Number(index) || (e.range && Number(index) >= e.index)))
      problems.push(`reads ${kind}[${index}], which the header does not list`);
  }
  for (const [expr] of code.matchAll(/\bARGV\[(?!\d+\])[^\]]*\]/g)) {
    if (!argvTail || !/^ARGV\[[A-Za-z_]\w*\]$/.test(expr))
      problems.push(`indexes ARGV by arithmetic (${expr}): pack the variable part into one argument`);
  }
  if (/\bunpack\(ARGV\b/.test(code) && !argvTail) problems.push('unpacks ARGV without an ARGV[n..] tail');
  if (/\b(KEYS)\[(?!\d+\])/.test(code) && !keysTail)
    problems.push('indexes KEYS by a variable without a KEYS[n..] tail');
  for (const [local, kind, index] of bindings(header.body)) {
    const entry = (kind === 'KEYS' ? header.keys : header.argv).find((e) => e.index === index && !e.range);
    if (entry && entry.name !== local)
      problems.push(`binds ${kind}[${index}] to "${local}", which the header names "${entry.name}"`);
  }
  if (argvFixed === 0 && !argvTail && /\bARGV\b/.test(code)) problems.push('reads ARGV but lists none');
  return problems;
}

const scripts = readdirSync(DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.lua') && !f.startsWith(`lib${path.sep}`))
  .sort();

describe('script headers', () => {
  it('finds the scripts', () => expect(scripts.length).toBeGreaterThan(40));

  it.each(scripts)('%s lists its KEYS and ARGV and reads nothing else', (file) => {
    expect(problemsOf(path.join(DIR, file))).toEqual([]);
  });
});
