import { clip } from "../../clip.ts";

/**
 * The `name=value` pairs of a query string or a form-urlencoded body, each
 * decoded where it can be. `decodeURIComponent` throws on a `%` without two
 * hex digits and on escapes whose bytes are not UTF-8, where fast-querystring
 * and qs keep the text as it came (`%FF` would be read as the three
 * characters `%FF`): such a name or value is undefined here, and the request
 * answers 400 naming it (contract A.2).
 */

export interface FormPair {
  rawName: string;
  /** "" for a name without `=`. */
  rawValue: string;
  /** Undefined when the name cannot be decoded. */
  name: string | undefined;
  /** Undefined when the value cannot be decoded. */
  value: string | undefined;
}

/** A form-urlencoded name or value decoded (`+` is a space), or undefined when it cannot be. */
export function decodeFormComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/** Every non-empty pair of `text`, in order. */
export function formPairs(text: string): FormPair[] {
  const pairs: FormPair[] = [];
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const at = pair.indexOf("=");
    const rawName = at === -1 ? pair : pair.slice(0, at);
    const rawValue = at === -1 ? "" : pair.slice(at + 1);
    pairs.push({ rawName, rawValue, name: decodeFormComponent(rawName), value: decodeFormComponent(rawValue) });
  }
  return pairs;
}

/** `text` as a message quotes it: a JSON string of its first 60 characters. */
export function quoted(text: string): string {
  return JSON.stringify(clip(text, 61));
}

/** Why a name or value sent as `text` could not be decoded, quoting (the start of) it. */
export function undecodable(text: string): string {
  return `${quoted(text)} holds a malformed percent-escape or escaped bytes that are not UTF-8`;
}
