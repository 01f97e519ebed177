/**
 * What a hit shows: the query words a document matched, and a snippet of at most SNIPPET_CHARS characters of its
 * content from a little before the first match, the matched words wrapped in <mark>, everything else HTML-escaped.
 */
import type { Document } from './documents.js';
import type { DocumentSearch } from './search.js';
import { foldCase, tokens, wordsOf } from './text.js';

export const SNIPPET_CHARS = 200;
/** Characters of context kept before the first match (then moved to the next word start). */
const LEAD = 60;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The words of `wanted` (in its order) that the document has, in its title or content, and where its content has
 * the first of them (-1: nowhere). Words that are not substrings of the folded content are not looked for in it,
 * and the scan stops once every word left has been seen, so a long document is rarely read to its end.
 */
function findTerms(
  wanted: readonly string[],
  { title, content }: Pick<Document, 'title' | 'content'>,
): { matched: string[]; first: number } {
  const has = new Set(wordsOf(title).filter((w) => wanted.includes(w)));
  const folded = foldCase(content);
  const inContent = new Set(wanted.filter((w) => folded.includes(w)));
  const pending = new Set(inContent);
  let first = -1;
  for (const t of pending.size > 0 ? tokens(content) : []) {
    if (!t.word || !inContent.has(t.word)) continue;
    if (first < 0) first = t.start;
    has.add(t.word);
    pending.delete(t.word);
    if (pending.size === 0) break;
  }
  return { matched: wanted.filter((w) => has.has(w)), first };
}

/** The snippet of `content` whose first matched word starts at `first` (-1: none, the snippet is its start). */
export function snippet(content: string, matched: ReadonlySet<string>, first: number): string {
  let start = 0;
  if (first > LEAD) {
    start = first - LEAD;
    const space = content.slice(start, first).search(/\s\S/);
    if (space >= 0) start += space + 1;
    else if (/[\udc00-\udfff]/.test(content[start] ?? '')) start++;
  }
  let end = start;
  for (let n = 0; end < content.length && n < SNIPPET_CHARS; n++) end += content.codePointAt(end)! > 0xffff ? 2 : 1;
  const window = content.slice(start, end);
  let out = '';
  let at = 0;
  for (const t of tokens(window)) {
    if (!t.word || !matched.has(t.word)) continue;
    out += `${escape(window.slice(at, t.start))}<mark>${escape(window.slice(t.start, t.end))}</mark>`;
    at = t.end;
  }
  return out + escape(window.slice(at));
}

/** One search result as shown: the document, its score, the query words it has and its snippet. */
export interface DocumentHit {
  document: Document;
  score: number;
  matchedTerms: string[];
  snippet: string;
}

/** The hits of a page whose documents were loaded (null: deleted since the search ran, left out). */
export function describeHits(search: DocumentSearch, documents: readonly (Document | null)[]): DocumentHit[] {
  return search.hits.flatMap(({ score }, i) => {
    const document = documents[i];
    if (!document) return [];
    const { matched, first } = findTerms(search.terms, document);
    return [{ document, score, matchedTerms: matched, snippet: snippet(document.content, new Set(matched), first) }];
  });
}
