import { parse } from "lossless-json";

/**
 * A JSON number a double cannot hold as it was sent: an integer past 2^53 - 1
 * that is not itself a double (another system's 64-bit id), more significant
 * digits than a double keeps, or past its range. JSON.parse rounds such a
 * number without a word (and reads 1e400 as Infinity, which JSON then writes
 * as null), so an answer that may hold one is parsed keeping the number's
 * text. The careful read of its records (storable-text.ts) turns each such
 * number into that text and names the field: a deviation is kept and said,
 * never rounded away.
 */
export class UnroundedNumber {
  constructor(readonly text: string) {}

  /** Written as its text wherever it is written before the careful read replaces it. */
  toJSON(): string {
    return this.text;
  }
}

/**
 * A cheap first look for such a number: a number token (after `:`, `,` or `[`)
 * of sixteen or more digits and points, or with a three-digit exponent. A
 * number with fewer significant digits and a smaller exponent is always a
 * double read exactly, so the answers this passes over read the same either
 * way. Text inside a string can match too; that only costs the slower parse.
 */
const LONG_NUMBER = /[:,[]\s*-?(?:\d[\d.]{15}|[\d.]+[eE][+-]?\d{3})/;

/** The decimal value a number's text names, as its significant digits and the power of ten of the last one. */
function decimalValue(text: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return undefined;
  const [, sign, whole, fraction = "", exponent = "0"] = match as unknown as [string, string, string, string?, string?];
  const digits = `${whole}${fraction}`.replace(/^0+/, "");
  if (digits === "") return "0";
  const significant = digits.replace(/0+$/, "");
  return `${sign}${significant}e${Number(exponent) - fraction.length + (digits.length - significant.length)}`;
}

/** A double where the double names the value the text does (as JSON.parse reads it), else the text kept. */
function readNumber(text: string): number | UnroundedNumber {
  const value = Number(text);
  if (Number.isFinite(value) && decimalValue(String(value)) === decimalValue(text)) return value;
  return new UnroundedNumber(text);
}

/**
 * The value of an answer's JSON text, and whether it was read keeping long
 * numbers (then it may hold UnroundedNumber values, and its records need the
 * careful read). Invalid JSON throws as JSON.parse throws. A field named twice
 * keeps its last value, as JSON.parse keeps it.
 */
export function parseJson(text: string): { value: unknown; exact: boolean; controlCharacters?: true; nonFiniteNumbers?: true } {
  try {
    return parseText(text);
  } catch (error) {
    const repaired = repairJsonText(text);
    if (repaired.text === text) throw error;
    return { ...parseText(repaired.text), ...(repaired.controlCharacters ? { controlCharacters: true } : {}), ...(repaired.nonFiniteNumbers ? { nonFiniteNumbers: true } : {}) };
  }
}

/** The tokens Python's json.dumps (allow_nan, its default) writes for floats JSON has no number for. */
const NON_FINITE = /^-?Infinity|^NaN/;

/**
 * `text` with what JSON refuses in it made readable, so that one such field does not cost every record of the
 * answer: control characters (U+0000 to U+001F) standing raw inside a string, as hand-built JSON writers put
 * tabs and line breaks, written as \u escapes (the text the writer meant); and the bare tokens NaN, Infinity and
 * -Infinity written as strings, which the tolerant read names as the deviating values they are.
 */
function repairJsonText(text: string): { text: string; controlCharacters: boolean; nonFiniteNumbers: boolean } {
  let repaired = "";
  let copied = 0;
  let inString = false;
  let controlCharacters = false;
  let nonFiniteNumbers = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (!inString) {
      inString = code === 0x22;
      const token = code === 0x4e || code === 0x49 || code === 0x2d ? NON_FINITE.exec(text.slice(index, index + 9))?.[0] : undefined;
      if (token !== undefined) {
        repaired += `${text.slice(copied, index)}"${token}"`;
        index += token.length - 1;
        copied = index + 1;
        nonFiniteNumbers = true;
      }
    } else if (code === 0x5c) {
      index += 1;
    } else if (code === 0x22) {
      inString = false;
    } else if (code < 0x20) {
      repaired += `${text.slice(copied, index)}\\u${code.toString(16).padStart(4, "0")}`;
      copied = index + 1;
      controlCharacters = true;
    }
  }
  return { text: copied === 0 ? text : repaired + text.slice(copied), controlCharacters, nonFiniteNumbers };
}

function parseText(text: string): { value: unknown; exact: boolean } {
  if (!LONG_NUMBER.test(text)) return { value: JSON.parse(text) as unknown, exact: false };
  try {
    return { value: parse(text, undefined, { parseNumber: readNumber, onDuplicateKey: ({ newValue }) => newValue }), exact: true };
  } catch {
    // Text that is not JSON fails here as any answer's does; JSON nested deeper than lossless-json's recursion
    // reaches (thousands of levels) is read as JSON.parse reads it.
    return { value: JSON.parse(text) as unknown, exact: false };
  }
}
