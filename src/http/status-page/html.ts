/**
 * A tagged template that escapes every interpolated value unless it is
 * already markup built the same way. Campaign names, error messages and
 * upstream endpoints all come from outside, so nothing reaches the page
 * unescaped by accident: the only way to insert raw markup is to build it
 * with `html` (or `raw`, for constants written in this code).
 */

export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Interpolation = SafeHtml | string | number | null | undefined | false | readonly Interpolation[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? "");
  });
  return new SafeHtml(out);
}

/** Markup written in this code base (styles, the refresh script); never pass outside text. */
export function raw(text: string): SafeHtml {
  return new SafeHtml(text);
}
