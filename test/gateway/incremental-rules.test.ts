/**
 * The validation rules of `@defer` and `@stream` (@graphql-yoga/plugin-defer-stream's, and the gateway's refusal of
 * them in subscriptions) apply to a document that uses them, and a document without them is validated as before:
 * plugins/incremental.ts adds those rules only to such documents, so that `{ me }` does not pay for them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await t.signUp());
});

const refusal = async (query: string) => {
  const { errors } = await t.gql(query, {}, token);
  return errors?.map((e) => [e.message, e.extensions?.code]);
};

describe('a document with @defer or @stream', () => {
  it('is refused with @stream on a field that is no list', async () => {
    expect(await refusal('{ me @stream(initialCount: 1) { id } }')).toEqual([
      ['Stream directive cannot be used on non-list field "me" on type "Query".', 'BAD_USER_INPUT'],
    ]);
  });

  it('is refused with @defer on a mutation root field', async () => {
    expect(await refusal('mutation { ... @defer { signOut } }')).toEqual([
      ['Defer directive cannot be used on root mutation type "Mutation".', 'BAD_USER_INPUT'],
    ]);
  });

  it('is refused with two @defer of one label', async () => {
    expect(
      await refusal('{ ... @defer(label: "a") { me { id } } ... @defer(label: "a") { me { username } } }'),
    ).toEqual([['Defer/Stream directive label argument must be unique.', 'BAD_USER_INPUT']]);
  });

  it('is refused once for fields that conflict', async () => {
    expect(await refusal('{ me { id: username ... @defer { id } } }')).toEqual([
      [
        'Fields "id" conflict because "username" and "id" are different fields. Use different aliases on the fields to fetch both if this was intentional.',
        'BAD_USER_INPUT',
      ],
    ]);
  });
});

describe('a document without them', () => {
  it('is refused once for fields that conflict, and served otherwise', async () => {
    expect(await refusal('{ me { id: username id } }')).toEqual([
      [
        'Fields "id" conflict because "username" and "id" are different fields. Use different aliases on the fields to fetch both if this was intentional.',
        'BAD_USER_INPUT',
      ],
    ]);
    expect(await refusal('{ me { id } }')).toBeUndefined();
  });
});
