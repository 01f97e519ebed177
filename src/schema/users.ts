import * as resolvers from '../resolvers/users.js';
import type { Authenticated, User } from '../services/users/users.js';
import { builder } from './builder.js';
import { DIRECTORY_PAGE, PASSWORD_MAX, PASSWORD_MIN } from '../services/users/users.js';
import { firstArg } from './args.js';

export const UserType = builder.objectRef<User>('User').implement({
  description: 'A user. Usernames are case-insensitive and stored in lower case; the id is the username.',
  fields: (t) => ({
    id: t.exposeID('username'),
    username: t.exposeString('username'),
    isAdmin: t.field({
      type: 'Boolean',
      description: 'Whether the user holds an admin grant (npm run admin -- grant NAME, or grantAdmin).',
      resolve: resolvers.isAdmin,
    }),
  }),
});

const AuthPayload = builder.objectRef<Authenticated>('AuthPayload').implement({
  fields: (t) => ({
    token: t.exposeString('token', {
      description: 'Send as `Authorization: Bearer <token>`; expires after SESSION_TTL idle.',
    }),
    user: t.field({ type: UserType, resolve: (p) => p.user }),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: UserType,
    nullable: true,
    description:
      'The signed-in user; null without a token. A token that is no session (expired, revoked, mis-pasted) is UNAUTHENTICATED, saying what to do.',
    resolve: resolvers.me,
  }),
  users: t.field({
    type: [UserType],
    description:
      'Directory autocomplete: users whose name starts with `prefix` (case-insensitive), sorted by username.',
    args: { prefix: t.arg.string({ required: true }), first: firstArg(t.arg, DIRECTORY_PAGE) },
    resolve: resolvers.users,
  }),
}));

const credentials = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0]) => ({
  username: t.arg.string({ required: true }),
  password: t.arg.string({ required: true }),
});

builder.mutationFields((t) => ({
  signUp: t.field({
    type: AuthPayload,
    description: `Creates a user (username 3-32 of [a-z0-9_.-], case-insensitive; password ${PASSWORD_MIN}-${PASSWORD_MAX} characters) and signs in.`,
    args: credentials(t),
    resolve: resolvers.signUp,
  }),
  signIn: t.field({ type: AuthPayload, args: credentials(t), resolve: resolvers.signIn }),
  grantAdmin: t.withAuth({ admin: true }).field({
    type: UserType,
    description: 'Admin: makes an existing user an admin (NOT_FOUND for a name nobody has signed up).',
    args: { username: t.arg.string({ required: true }) },
    resolve: resolvers.grantAdmin,
  }),
  revokeAdmin: t.withAuth({ admin: true }).field({
    type: UserType,
    description: 'Admin: takes an admin grant back; the last grant cannot be revoked (CONFLICT).',
    args: { username: t.arg.string({ required: true }) },
    resolve: resolvers.revokeAdmin,
  }),
  signOut: t.field({
    type: 'Boolean',
    description: 'Revokes the current token at once; false when the request carried no valid session.',
    resolve: resolvers.signOut,
  }),
}));
