// The one DOM builder the views share: plain elements, no framework (the
// views are small, and a library would be one more thing to keep up).

export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null && child !== false) node.append(child);
  return node;
}

export function button(label: string, onClick: () => void, kind = "", attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h("button", { type: "button", class: `button ${kind}`.trim(), ...attrs }, label);
  b.addEventListener("click", onClick);
  return b;
}

/** Fills `view` with a card per item (`card` draws one), or says `empty` when there is none. */
export function cards<T>(view: HTMLElement, items: T[], empty: string, card: (item: T) => HTMLLIElement) {
  view.replaceChildren(items.length
    ? h("ul", { class: "cards" }, ...items.map(card))
    : h("p", { class: "empty" }, empty));
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
