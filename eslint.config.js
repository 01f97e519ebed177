import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const graphql = ['graphql', 'graphql-*', '@graphql-*/*', '@pothos/*', '@escape.tech/*'];
const above = (...layers) => layers.map((layer) => `**/${layer}`);
/** The layers' walls: an import that runs upward, or GraphQL below the resolvers, fails the lint. */
const walls = (files, groups, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: groups, message }] }] },
});

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  walls(
    ['src/services/**', 'src/redis/**'],
    [...graphql, ...above('schema/**', 'resolvers/**', 'gateway/**', 'context.js', 'app.js')],
    'services and Redis know nothing of GraphQL or of the layers above them',
  ),
  walls(
    ['src/redis/**'],
    [...graphql, ...above('schema/**', 'resolvers/**', 'gateway/**', 'context.js', 'app.js', 'services/**')],
    'redis/ stands below the services',
  ),
  walls(
    ['src/resolvers/**', 'src/schema/**', 'src/gateway/**'],
    above('redis/**'),
    'above the services, Redis is reached through them',
  ),
  { files: ['eslint.config.js'], extends: [tseslint.configs.disableTypeChecked] },
);
