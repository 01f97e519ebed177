/**
 * A search's page of documents is loaded by the search's own resolver, in the turn the search ends, when the
 * operation shows it (resolvers/documents.ts): never when it does not, once per shard holding a document of the page
 * however many fields show it, and with the content only when a field needs it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

type Arg = string | Buffer | number;

describe("a search's page", () => {
  let t: TestApp;
  let token: string;
  let holding: number;

  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.signUp()).token;
    const ids = Array.from({ length: 12 }, (_, i) => `page${i}`);
    for (const id of ids) {
      const r = await t.gql(
        'mutation($id: ID!) { indexDocument(id: $id, title: "Paged", content: "paged words here") { id } }',
        { id },
        token,
      );
      expect(r.errors).toBeUndefined();
    }
    const shards = t.app.services.documents as unknown as { shards: { of(id: string): unknown } };
    holding = new Set(ids.slice(0, 10).map((id) => shards.shards.of(id))).size;
  });

  /** The commands that load documents (their keys hold `:doc:`) while `op` runs, each with whether it read content. */
  async function loadsOf(op: string): Promise<{ content: boolean }[]> {
    const sent: Arg[][] = [];
    const client = t.redis as unknown as { sendCommand(c: { name: string; args: Arg[] }): unknown };
    const send = client.sendCommand.bind(client);
    client.sendCommand = (c) => {
      sent.push([c.name, ...c.args]);
      return send(c);
    };
    try {
      const r = await t.gql<{ searchDocuments: { totalCount: number } }>(op, {}, token);
      expect(r.errors, r.text).toBeUndefined();
      expect(r.data!.searchDocuments.totalCount).toBe(12);
    } finally {
      client.sendCommand = send;
    }
    const docKey = `${t.config.keyPrefix}docs:`;
    return sent
      .filter((args) => args.some((a) => typeof a === 'string' && a.startsWith(docKey) && a.includes(':doc:')))
      .map((args) => {
        // EVALSHA sha numkeys key... content viewer (redis/documents/commands.ts, readDocuments)
        expect(String(args[0])).toMatch(/^eval/i);
        return { content: String(args[3 + Number(args[2])]) === '1' };
      });
  }

  it('is not loaded when the operation shows no document', async () => {
    expect(await loadsOf('{ searchDocuments(query: "paged", sort: ID_ASC) { totalCount resultId } }')).toEqual([]);
  });

  it('is loaded once per shard, without content, for `documents` without content', async () => {
    const loads = await loadsOf(
      '{ searchDocuments(query: "paged", sort: ID_ASC) { totalCount documents { id title } } }',
    );
    expect(loads).toEqual(Array.from({ length: holding }, () => ({ content: false })));
  });

  it('is loaded once per shard, with content, for `hits`, `documents` beside them, and through a fragment', async () => {
    for (const op of [
      '{ searchDocuments(query: "paged", sort: ID_ASC) { totalCount hits { snippet } } }',
      `{ searchDocuments(query: "paged", sort: ID_ASC) { totalCount ...Page } }
       fragment Page on DocumentSearch { documents { id } hits { snippet document { title } } }`,
    ]) {
      const loads = await loadsOf(op);
      expect(loads, op).toEqual(Array.from({ length: holding }, () => ({ content: true })));
    }
  });
});
