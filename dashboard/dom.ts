/** Building DOM without innerHTML: text a client or a log wrote stays text. */
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

/** An element with attributes (`on<event>` ones are listeners; false and undefined are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name in element && typeof value !== 'boolean' && !name.startsWith('data-') && name !== 'for')
      (element as unknown as Record<string, unknown>)[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  element.append(
    ...children
      .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'number' ? String(c) : c)),
  );
  return element;
}

/** A table: a header row and one row per item. */
export function table(headers: string[], rows: Child[][], attributes: Attributes = {}): HTMLTableElement {
  return h(
    'table',
    attributes,
    h('thead', {}, h('tr', {}, ...headers.map((text) => h('th', { scope: 'col' }, text)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

/** A number with at most `digits` decimals, in the page's locale. */
export const num = (n: number, digits = 0) => n.toLocaleString(undefined, { maximumFractionDigits: digits });
