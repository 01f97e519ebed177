/** The GraphQL examples of a README section, one operation per line, comments dropped: tests run them as written. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './entries.js';

/** The operations of the first ```graphql block after the bold `heading` (e.g. "Ad targeting"). */
export function readmeOperations(heading: string): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = new RegExp(`\\*\\*${heading}\\*\\*[\\s\\S]*?\`\`\`graphql\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!block) throw new Error(`README.md has no graphql block under **${heading}**`);
  return block[1]!
    .split('\n')
    .map((line) => line.replace(/\s+# .*$/, '').trim())
    .filter(Boolean);
}
