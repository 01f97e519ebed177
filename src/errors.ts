/**
 * Expected failures, raised by services and resolvers alike. They carry one of the public error codes of
 * docs/api.md; the GraphQL layer (src/gateway/errors.ts) turns them into GraphQL errors with `extensions.code`.
 * This module knows nothing of GraphQL so that services can use it.
 */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'BUSY',
  'MAINTENANCE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const BRAND = Symbol.for('redis-in-action-gateway.AppError');

export class AppError extends Error {
  override name = 'AppError';
  readonly [BRAND] = true;

  /** A brand check rather than `instanceof`, which fails when a module is loaded twice (test runners, bundlers). */
  static is(value: unknown): value is AppError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** graphql-js copies an original error's `extensions` onto the GraphQL error it wraps it in. */
  readonly extensions: { code: ErrorCode } & Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message);
    this.extensions = { ...details, code };
  }
}

/** `argument` names the offending argument so that the message says which one and why. */
export const badInput = (argument: string, why: string) =>
  new AppError('BAD_USER_INPUT', `${argument}: ${why}`, { argument });
export const unauthenticated = (message = 'sign in first') => new AppError('UNAUTHENTICATED', message);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new AppError('CONFLICT', message);
