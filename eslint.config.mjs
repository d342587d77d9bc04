import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/dist', '**/node_modules', '**/.data', '**/*.cjs', '**/*.mjs'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          // standalone mounts every app's router in one process; libs are kept off apps by the rule below.
          allow: ['@analytics/ingest-api', '@analytics/read-api', '@analytics/admin-api', '@analytics/mcp-gateway', '@analytics/retention-worker'],
          depConstraints: [
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
            { sourceTag: 'scope:standalone', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
          ],
        },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@analytics/*-api', '@analytics/mcp-gateway', '@analytics/retention-worker', '@analytics/standalone'], message: 'libs never import apps' }] }],
    },
  },
];
