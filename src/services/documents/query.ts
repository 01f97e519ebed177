/**
 * The query language (the book's parse(), extended): plain words must all match, `+word` is a synonym of the
 * word before it, `-word` excludes, `word*` is every indexed word starting with `word`. A sign applies to every
 * word of its space-separated chunk ("-e-mail" excludes "mail"); stop words and one-letter words are skipped.
 */
import { badInput } from '../../errors.js';
import { normalize, tokens } from './text.js';

export const QUERY_MAX_CHARS = 1000;
export const QUERY_MAX_WORDS = 32;

/** A word of a query; a prefix stands for the indexed words it starts. */
export interface Term {
  word: string;
  prefix: boolean;
}

export interface ParsedQuery {
  /** Every group must match; a group matches when any of its terms does. */
  groups: Term[][];
  /** A document with any of these is left out. */
  exclude: Term[];
}

const same = (a: Term, b: Term) => a.word === b.word && a.prefix === b.prefix;
const key = (group: Term[]) =>
  group
    .map((t) => (t.prefix ? `${t.word}*` : t.word))
    .sort()
    .join(' ');

export function parseQuery(raw: string): ParsedQuery {
  if (raw.length > QUERY_MAX_CHARS) throw badInput('query', `must be at most ${QUERY_MAX_CHARS} characters`);
  const groups: Term[][] = [];
  const exclude: Term[] = [];
  let current: Term[] = [];
  let count = 0;
  for (const chunk of raw.toWellFormed().split(/\s+/)) {
    const sign = chunk[0] === '+' || chunk[0] === '-' ? chunk[0] : '';
    for (const t of tokens(chunk)) {
      if (++count > QUERY_MAX_WORDS) throw badInput('query', `must have at most ${QUERY_MAX_WORDS} words`);
      const prefix = chunk[t.end] === '*';
      const word = prefix ? prefixWord(chunk.slice(t.start, t.end)) : t.word;
      if (!word) continue;
      const term = { word, prefix };
      if (sign === '-') {
        if (!exclude.some((e) => same(e, term))) exclude.push(term);
      } else if (sign === '+' || current.length === 0) {
        if (!current.some((c) => same(c, term))) current.push(term);
      } else {
        groups.push(current);
        current = [term];
      }
    }
  }
  if (current.length > 0) groups.push(current);
  if (groups.length === 0)
    throw badInput('query', 'has no word to search for (stop words, one-letter words and -words do not count)');
  const seen = new Set<string>();
  return { groups: groups.filter((g) => !seen.has(key(g)) && seen.add(key(g))), exclude };
}

/** The word before a `*`: folded as any word, but a stop word may start others ("the*" finds "theory"). */
function prefixWord(raw: string): string {
  const word = normalize(raw);
  if (word.length < 2) throw badInput('query', `"${raw}*": a prefix needs at least two letters before the *`);
  return word;
}
