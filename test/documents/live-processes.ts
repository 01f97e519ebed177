/** What the live-search tests share: two gateway processes, and a client's list rebuilt from its changes. */
import { startTestApp, uniquePrefix, type TestApp } from '../support/app.js';

/** Two gateway apps on one Redis and one key prefix (two processes' worth), and one user signed in on each. */
export async function twoProcesses(
  env: Record<string, string> = {},
): Promise<{ a: TestApp; b: TestApp; writer: string; reader: string }> {
  const prefix = uniquePrefix();
  const [a, b] = (await Promise.all([1, 2].map(() => startTestApp({ ...env, KEY_PREFIX: prefix })))) as [
    TestApp,
    TestApp,
  ];
  const { token: writer, username } = await a.signUp();
  const signIn = await b.gql<{ signIn: { token: string } }>(
    'mutation($u: String!) { signIn(username: $u, password: "password123") { token } }',
    { u: username },
  );
  if (!signIn.data) throw new Error(signIn.text);
  return { a, b, writer, reader: signIn.data.signIn.token };
}

/** What a client holds after applying `changes` in order: LEFT removes; ENTERED and UPDATED move to `position`. */
export function apply(changes: readonly { kind: string; documentId: string; position: number | null }[]): string[] {
  const list: string[] = [];
  for (const c of changes) {
    const at = list.indexOf(c.documentId);
    if (at >= 0) list.splice(at, 1);
    if (c.kind !== 'LEFT') list.splice(c.position!, 0, c.documentId);
  }
  return list;
}
