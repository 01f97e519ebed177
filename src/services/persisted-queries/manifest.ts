/**
 * The manifest of trusted documents (PERSISTED_DOCUMENTS): the JSON object graphql-codegen's client preset writes
 * with `persistedDocuments: true` (`persisted-documents.json`), each document's hash to the document, the hash being
 * the SHA-256 (`hashAlgorithm: 'sha256'`) or SHA-1 (the preset's default) in lowercase hex of the document as
 * written. Read once at start; anything else stops the start with one line saying what and where.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../config.js';

const HEX = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const Manifest = z.record(z.string(), z.string().min(1, 'an empty document'));

const digest = (algorithm: 'sha1' | 'sha256', text: string) => createHash(algorithm).update(text).digest('hex');

/** The manifest at `file`: hash → document; throws a ConfigError naming the file and the first problem. */
export function loadManifest(file: string): ReadonlyMap<string, string> {
  const fail = (why: string) =>
    new ConfigError(`PERSISTED_DOCUMENTS ${file}: ${why} (expected graphql-codegen's persisted-documents.json)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw fail(err instanceof Error ? err.message : String(err));
  }
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fail(`${issue.path.length ? `"${issue.path.join('.')}": ` : ''}${issue.message}`);
  }
  const manifest = new Map(Object.entries(parsed.data));
  for (const [hash, document] of manifest) {
    if (!HEX.test(hash))
      throw fail(`"${hash}": a key is the SHA-256 (64) or SHA-1 (40) of its document in lowercase hex digits`);
    if (digest(hash.length === 40 ? 'sha1' : 'sha256', document) !== hash)
      throw fail(`"${hash}" is not the ${hash.length === 40 ? 'SHA-1' : 'SHA-256'} of its document`);
  }
  return manifest;
}
