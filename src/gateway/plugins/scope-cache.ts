/**
 * Lets go of Pothos scope-auth's cache of an operation once its subscription has started. The scopes of a
 * subscription are checked when it starts (schema/builder.ts, `authorizeOnSubscribe`), and the cache (five Maps,
 * about 1.4 KB) would otherwise live as long as the subscription's context. A field of a later event that needs a
 * scope makes a new one.
 */
import { RequestCache } from '@pothos/plugin-scope-auth';
import type { Plugin } from 'graphql-yoga';

export function useScopeCacheRelease(): Plugin {
  return {
    onSubscribe({ args }) {
      return { onSubscribeResult: () => RequestCache.clearForContext(args.contextValue) };
    },
  };
}
