/**
 * docs/api.md stays in step with schema.graphql: every type its ```graphql blocks show exists with the same fields,
 * arguments, defaults and enum values, and every root field the gateway serves is documented there.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Kind,
  astFromValue,
  buildSchema,
  isEnumType,
  isInputObjectType,
  isObjectType,
  parse,
  print,
  type DefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type InputValueDefinitionNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/entries.js';

const ROOTS = ['Query', 'Mutation', 'Subscription'];
/** The schema as printed from the code (npm run schema:check keeps the file equal to it). */
const schema = buildSchema(readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));

const definitions: DefinitionNode[] = [
  ...readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8').matchAll(/```graphql\n([\s\S]*?)```/g),
].flatMap((m) => parse(m[1]!).definitions);

/** An argument or input field as `name: Type = default`. */
function signature(v: GraphQLArgument | GraphQLInputField): string {
  const value = v.defaultValue === undefined ? undefined : astFromValue(v.defaultValue, v.type);
  return `${v.name}: ${String(v.type)}${value ? ` = ${print(value)}` : ''}`;
}
const documented = (v: InputValueDefinitionNode) =>
  `${v.name.value}: ${print(v.type)}${v.defaultValue ? ` = ${print(v.defaultValue)}` : ''}`;
const field = (f: GraphQLField<unknown, unknown>) =>
  `${f.name}(${f.args.map(signature).join(', ')}): ${String(f.type)}`;

describe('docs/api.md', () => {
  it('shows every type as the schema has it', () => {
    const problems: string[] = [];
    for (const d of definitions) {
      if (d.kind === Kind.ENUM_TYPE_DEFINITION) {
        const t = schema.getType(d.name.value);
        const values = (d.values ?? []).map((v) => v.name.value);
        if (!isEnumType(t)) problems.push(`enum ${d.name.value} is not in the schema`);
        else if (
          values.join() !==
          t
            .getValues()
            .map((v) => v.name)
            .join()
        )
          problems.push(
            `enum ${d.name.value}: ${values.join()} where the schema has ${t
              .getValues()
              .map((v) => v.name)
              .join()}`,
          );
      } else if (d.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION) {
        const t = schema.getType(d.name.value);
        if (!isInputObjectType(t)) problems.push(`input ${d.name.value} is not in the schema`);
        else {
          const doc = (d.fields ?? []).map(documented);
          const real = Object.values(t.getFields()).map(signature);
          if (doc.join() !== real.join())
            problems.push(`input ${d.name.value}: ${doc.join()} / schema: ${real.join()}`);
        }
      } else if (d.kind === Kind.OBJECT_TYPE_DEFINITION) {
        const t = schema.getType(d.name.value);
        if (!isObjectType(t)) {
          problems.push(`type ${d.name.value} is not in the schema`);
          continue;
        }
        const fields = t.getFields();
        for (const f of d.fields ?? []) {
          const real = fields[f.name.value];
          const doc = `${f.name.value}(${(f.arguments ?? []).map(documented).join(', ')}): ${print(f.type)}`;
          if (!real) problems.push(`${d.name.value}.${f.name.value} is not in the schema`);
          else if (doc !== field(real)) problems.push(`${d.name.value}.${doc} where the schema has ${field(real)}`);
        }
        const shown = new Set((d.fields ?? []).map((f) => f.name.value));
        if (!ROOTS.includes(d.name.value))
          for (const name of Object.keys(fields))
            if (!shown.has(name)) problems.push(`${d.name.value}.${name} is served but not documented`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('documents every root field the gateway serves', () => {
    const shown = new Set(
      definitions.flatMap((d) =>
        d.kind === Kind.OBJECT_TYPE_DEFINITION && ROOTS.includes(d.name.value)
          ? (d.fields ?? []).map((f) => `${d.name.value}.${f.name.value}`)
          : [],
      ),
    );
    const served = ROOTS.flatMap((r) => {
      const t = schema.getType(r);
      return isObjectType(t) ? Object.keys(t.getFields()).map((f) => `${r}.${f}`) : [];
    });
    expect(served.filter((f) => !shown.has(f))).toEqual([]);
    expect(served.length).toBeGreaterThan(50);
  });
});
