import { readdirSync } from 'node:fs';
import { URL } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const graphql = ['graphql', 'graphql-*', '@graphql-*/*', '@pothos/*', '@escape.tech/*'];
const above = (...layers) => layers.map((layer) => `**/${layer}`);
const foldersOf = (dir) =>
  readdirSync(new URL(dir, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
/** The domains: every folder of src/redis but its shared Lua. */
const domains = foldersOf('src/redis/').filter((d) => d !== 'lib');

/** A wall: importing any of `groups` fails the lint with `message`. */
const wall = (groups, message) => ({ group: groups, message });
const noGraphQL = wall(
  [...graphql, ...above('schema/**', 'resolvers/**', 'gateway/**', 'context.js', 'app.js')],
  'services and Redis know nothing of GraphQL or of the layers above them',
);
/** Only a domain's commands talk to Redis: its services get them from the domain's factory (services/<d>/index.ts). */
const door = wall(
  ['ioredis', '**/redis/clients.js', '**/redis/scripts.js', '**/redis/replies.js'],
  "a service reaches Redis only through its domain's commands (redis/<domain>/commands.ts), given by its factory",
);
const othersOf = (domain) =>
  wall(
    domains.filter((d) => d !== domain).map((d) => `**/redis/${d}/**`),
    `the ${domain} domain talks to Redis through its own commands; another domain is reached through its services`,
  );
const rule = (files, patterns, ignores = []) => ({
  files,
  ignores,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'coverage/', 'dist/', '.tools/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // The layers' walls: an import that runs upward, or GraphQL below the resolvers, fails the lint. A file gets the
  // last of these rules that matches it, so each repeats the walls of the ones before it that still apply.
  rule(['src/services/**', 'src/redis/**'], [noGraphQL]),
  rule(
    ['src/redis/**'],
    [
      wall(
        [...graphql, ...above('schema/**', 'resolvers/**', 'gateway/**', 'context.js', 'app.js', 'services/**')],
        'redis/ stands below the services',
      ),
    ],
  ),
  rule(
    ['src/resolvers/**', 'src/schema/**', 'src/gateway/**'],
    [wall(above('redis/**'), 'above the services, Redis is reached through them')],
  ),
  rule(
    ['src/services/shared/**'],
    [
      noGraphQL,
      door,
      wall(
        domains.map((d) => `**/redis/${d}/**`),
        'shared code knows no domain',
      ),
    ],
    ['src/services/shared/domain.ts'],
  ),
  ...domains.flatMap((d) => [
    rule([`src/services/${d}/**`], [noGraphQL, othersOf(d), door], [`src/services/${d}/index.ts`]),
    rule([`src/services/${d}/index.ts`], [noGraphQL, othersOf(d)]),
  ]),
  { files: ['eslint.config.js', 'scripts/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
