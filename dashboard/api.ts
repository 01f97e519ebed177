/**
 * The dashboard's only way in: the gateway's public GraphQL endpoint over HTTP (POST /graphql), as any client. The
 * token from `signIn` is kept in sessionStorage (this tab only, gone when it closes) and sent as a Bearer token.
 */
const ENDPOINT = '/graphql';
const TOKEN_KEY = 'dashboard.token';

/** A GraphQL error (or a failed request), with the API's `extensions.code` when it gave one. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export const session = {
  get token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set token(token: string | null) {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  },
};

interface Reply<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Runs one operation; its data, or an ApiError with the first error's message and code. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  const token = session.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(ENDPOINT, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  } catch (err) {
    throw new ApiError(`the gateway did not answer (${(err as Error).message})`, 'NETWORK');
  }
  let reply: Reply<T>;
  try {
    reply = (await response.json()) as Reply<T>;
  } catch {
    throw new ApiError(`the gateway answered HTTP ${response.status} without GraphQL`, `HTTP_${response.status}`);
  }
  const [first] = reply.errors ?? [];
  if (first) throw new ApiError(first.message, first.extensions?.code);
  if (reply.data == null) throw new ApiError(`no data (HTTP ${response.status})`, undefined);
  return reply.data;
}
