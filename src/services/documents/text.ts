/**
 * The book's tokenizer (chapter 7: words of two letters or more, lower-cased, apostrophes trimmed, its stop words
 * dropped), extended from [a-z'] to the letters, marks and digits of every script, and its string_to_score.
 * Indexing, queries, matchedTerms and snippets all read words through `tokens`, so they agree on what a word is.
 */

/** The book's stop words (chapter 7, listing 7.1). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  `able about across after all almost also am among an and any are as at be because been but by can cannot could
  dear did do does either else ever every for from get got had has have he her hers him his how however if in into is
  it its just least let like likely may me might most must my neither no nor not of off often on only or other our
  own rather said say says she should since so some than that the their them then there these they this tis to too
  twas us wants was we were what when where which while who whom why will with would yet you your`.split(/\s+/),
);

/** Longer runs of letters (base64, hashes) are not words: a word becomes part of a key. */
export const WORD_MAX = 64;

const WORD = /[\p{L}\p{M}\p{N}']+/gu;
/** The word characters of ASCII after lower-casing (A-Z, a-z and 0-9 are its only letters and digits). */
const ASCII_WORD = /[a-z0-9']+/g;
const ASCII = /^[^\u0080-\uffff]*$/;

/** A run of word characters in a text, with its word (null when it is not one: too short, too long, a stop word). */
export interface Token {
  word: string | null;
  start: number;
  end: number;
}

/** Text in NFC and lower case, as words are: a word of a text is a substring of the text folded. */
export function foldCase(text: string): string {
  return (ASCII.test(text) ? text : text.normalize('NFC')).toLowerCase();
}

/** A run of word characters folded: NFC, lower case, apostrophes trimmed. */
export function normalize(raw: string): string {
  return trimApostrophes(foldCase(raw));
}

function trimApostrophes(w: string): string {
  return w.charCodeAt(0) === 39 || w.charCodeAt(w.length - 1) === 39 ? w.replace(/^'+|'+$/g, '') : w;
}

/** The run `raw` as a word; null when it is not one. */
function fold(raw: string): string | null {
  return asWord(normalize(raw));
}

/** A folded run as a word; null when it is too short, too long or a stop word. */
function asWord(w: string): string | null {
  return w.length >= 2 && w.length <= WORD_MAX && !STOP_WORDS.has(w) ? w : null;
}

/** Every run of word characters in `text`, in order. */
export function* tokens(text: string): Generator<Token> {
  for (const m of text.matchAll(WORD)) yield { word: fold(m[0]), start: m.index, end: m.index + m[0].length };
}

/** The words of a text, each occurrence. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  if (ASCII.test(text)) {
    // ASCII lower-cases letter by letter, so the whole text is folded at once (the same words, found faster)
    for (const m of text.toLowerCase().matchAll(ASCII_WORD)) {
      const w = asWord(trimApostrophes(m[0]));
      if (w) out.push(w);
    }
  } else for (const t of tokens(text)) if (t.word) out.push(t.word);
  return out;
}

/**
 * What relevance counts of a document: each word's frequency (a title word counts `titleWeight` times) and the
 * document's length in the same units.
 */
export function termFrequencies({
  title,
  content,
  titleWeight,
}: {
  title: string;
  content: string;
  titleWeight: number;
}): {
  frequencies: Map<string, number>;
  length: number;
} {
  const frequencies = new Map<string, number>();
  const titleWords = wordsOf(title);
  const contentWords = wordsOf(content);
  for (const w of titleWords) frequencies.set(w, (frequencies.get(w) ?? 0) + titleWeight);
  for (const w of contentWords) frequencies.set(w, (frequencies.get(w) ?? 0) + 1);
  return { frequencies, length: titleWeight * titleWords.length + contentWords.length };
}

/** What titles sort by: the title in lower case (compared by code point, as UTF-8 bytes compare). */
export function titleKey(title: string): string {
  return title.normalize('NFC').toLowerCase();
}

/**
 * The book's string_to_score: the first six bytes (UTF-8) as a number that orders as the strings do (a shorter
 * string first); strings sharing their first six bytes tie. Exact in a double (257^6 * 2 < 2^53).
 */
export function stringToScore(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  let score = 0;
  for (let i = 0; i < 6; i++) score = score * 257 + (i < bytes.length ? bytes[i]! + 1 : 0);
  return score * 2 + (bytes.length > 6 ? 1 : 0);
}
