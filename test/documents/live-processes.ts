/** Two gateway apps on one Redis and one key prefix (two processes' worth), and one user signed in on each. */
import { startTestApp, uniquePrefix, type TestApp } from '../support/app.js';

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
