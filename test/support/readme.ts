/** The README's first walk as its steps: shell blocks, and GraphiQL blocks of named operations with their user. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './entries.js';

export type WalkStep =
  | { kind: 'sh'; script: string }
  /** One operation per line (comments dropped), run as `user` (the block's `# as <user>` line). */
  | { kind: 'graphql'; user: string; operations: string[] };

/** The ```sh and ```graphql blocks of the section `## A first walk`, in order (code of other languages skipped). */
export function readmeWalk(): WalkStep[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = /^## A first walk\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no section "## A first walk"');
  return [...section.matchAll(/```(sh|graphql)\n([\s\S]*?)```/g)].map(([, kind, body]): WalkStep => {
    if (kind === 'sh') return { kind, script: body! };
    const lines = body!.split('\n');
    const user = /^# as (\w+)$/.exec(lines[0] ?? '')?.[1];
    if (!user) throw new Error(`a graphql block of the walk does not start with "# as <user>":\n${body}`);
    return {
      kind: 'graphql',
      user,
      operations: lines
        .slice(1)
        .map((l) => l.trim())
        .filter(Boolean),
    };
  });
}
