/**
 * Finding a secret in a text however the text spells it, and replacing it. One piece of code for every path a
 * secret could leave by: each log line, each upstream answer before it is read, each error's message.
 *
 * A text can spell each character of a secret in more than one way, and a reader (JSON.parse, a URL decoder, a
 * browser) turns every one of them back into the character. So the secret is searched for one character at a
 * time, each character allowed in any spelling a reader undoes at once:
 *
 * - itself;
 * - a JSON escape: `\uXXXX` (hex in either case; a pair of them for a character beyond U+FFFF), `\/` for `/`
 *   (PHP's json_encode writes every slash so), `\"`, `\\`, and `\b \f \n \r \t`;
 * - percent-encoding of its UTF-8 bytes, hex in either case (encodeURIComponent writes upper case, others lower
 *   case, and Python's quote leaves `/` as it is: each character is free to be encoded or not), `+` for a space
 *   (forms);
 * - an HTML character reference: `&#NN;` or `&#xHH;` (leading zeros and hex case free, the `;` optional as the
 *   HTML parser allows) and, for ASCII punctuation, the named ones (`&sol;`, `&plus;`, `&amp;`, ...).
 *
 * Each spelling is one of these, once: what a single decoding step recovers. Four nestings that common software
 * produces are also followed: a JSON escape inside JSON text (a JSON document stored as a string: its backslashes
 * doubled, `\\u0073`), a percent-escape inside a URL that is itself a URL's parameter (`%252F`: a click-tracking
 * link), an HTML reference escaped twice (`&amp;#43;`), and an HTML reference's `&` written `\u0026` (Go's
 * encoding/json does so by default). Other transformations (base64, a cut, deeper nestings) are out of reach.
 *
 * A text that is JSON (`json`: an upstream answer, a log line) is scrubbed without breaking it: a `"`, a `\` or a
 * control character is matched only escaped (as written it would be the text's own quote or escape), and a match
 * is replaced only if it is whole characters and escapes of one string: not one that starts inside an escape (the
 * `n` of `\n`, the hex digits of `\u00e9`), not one outside strings (a password `12345678` in the number
 * `123456789`, which stays as it is), unless it is a number of the same value there (a key of digits echoed as a
 * number, `.0` or a zero exponent included), which becomes the marker as a string. The text's strings are read
 * only where there is a match, once from start to end however many there are (the place of each is past the
 * last); the marker holds neither `"` nor `\`.
 */

/** What replaces a secret. It must hold no `"` and no `\`: it lands inside JSON strings as it is. */
export const REDACTED = "[REDACTED]";

/** Named HTML character references of the ASCII characters (the WHATWG list; names are case-sensitive). */
const NAMED_REFERENCES: Readonly<Record<string, readonly string[]>> = {
  "\t": ["Tab"],
  "\n": ["NewLine"],
  "!": ["excl"],
  '"': ["quot", "QUOT"],
  "#": ["num"],
  $: ["dollar"],
  "%": ["percnt"],
  "&": ["amp", "AMP"],
  "'": ["apos"],
  "(": ["lpar"],
  ")": ["rpar"],
  "*": ["ast", "midast"],
  "+": ["plus"],
  ",": ["comma"],
  ".": ["period"],
  "/": ["sol"],
  ":": ["colon"],
  ";": ["semi"],
  "<": ["lt", "LT"],
  "=": ["equals"],
  ">": ["gt", "GT"],
  "?": ["quest"],
  "@": ["commat"],
  "[": ["lsqb", "lbrack"],
  "\\": ["bsol"],
  "]": ["rsqb", "rbrack"],
  "^": ["Hat"],
  _: ["lowbar", "UnderBar"],
  "`": ["grave", "DiacriticalGrave"],
  "{": ["lcub", "lbrace"],
  "|": ["verbar", "vert", "VerticalLine"],
  "}": ["rcub", "rbrace"],
};

/** JSON's short escapes of control characters. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t" };

/**
 * A run of backslashes that opens a JSON escape. Longer than one when the escape sits in JSON text stored as a
 * string of JSON (every backslash doubled): whatever the run's length, it is whole escapes (`\\` pairs, then the
 * escape itself or, for an even run, the escape's letters as they are).
 *
 * Where the secret's first character opens with such a run, the match starts only where the run does (`(?<!\\)`):
 * that is where the leftmost match starts anyway, and trying each backslash of a long run, each trying every
 * length of the rest of the run, would take time growing with the square of its length.
 */
function backslashes(first: boolean): string {
  return first ? String.raw`(?<!\\)\\+` : String.raw`\\+`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

/** Hex digits, each letter in either case. */
function anyCaseHex(value: number, digits = 0): string {
  return value
    .toString(16)
    .padStart(digits, "0")
    .replace(/[a-f]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);
}

/**
 * The spellings of one character (a code point, or a lone surrogate) as a regex group; `first`: the secret's
 * first character. Alternatives that open alike are grouped, so a text is not read twice at the same place.
 */
function characterPattern(character: string, json: boolean, first: boolean): string {
  const codePoint = character.codePointAt(0) as number;
  const spellings: string[] = [];
  const needsEscapeInJson = character === '"' || character === "\\" || codePoint < 0x20;
  if (!json || !needsEscapeInJson) spellings.push(escapeRegExp(character));

  // JSON escapes: \uXXXX of each UTF-16 unit (two for a character beyond U+FFFF), \/, the short escapes; then \"
  // (an odd run: after an even one the quote ends the string) and \\ (a pair, or two in JSON stored as a string:
  // bounded, since a run of pairs of any length followed by the next character's run would be read again for each
  // length tried, in time growing with the square of the run's).
  const escapes = [[...Array(character.length).keys()].map((index) => `u${anyCaseHex(character.charCodeAt(index), 4)}`).join(backslashes(false))];
  if (character === "/") escapes.push("/");
  const short = SHORT_ESCAPES[character];
  if (short !== undefined) escapes.push(short);
  spellings.push(`${backslashes(first)}(?:${escapes.join("|")})`);
  const runStart = first ? String.raw`(?<!\\)` : "";
  if (character === '"') spellings.push(String.raw`${runStart}(?:\\\\)*\\"`);
  if (character === "\\") spellings.push(String.raw`${runStart}(?:\\\\){1,2}`);

  // Percent-encoding of the UTF-8 bytes (none for a lone surrogate, which has no UTF-8 form); `%25` repeated is a
  // URL's parameter encoded again inside another URL. A space is also `+` (forms).
  const loneSurrogate = character.length === 1 && codePoint >= 0xd800 && codePoint <= 0xdfff;
  if (!loneSurrogate) spellings.push([...Buffer.from(character, "utf8")].map((byte) => `%(?:25)*${anyCaseHex(byte, 2)}`).join(""));
  if (character === " ") spellings.push(String.raw`\+`);

  // HTML character references: decimal, hex, named. The `&` also as `&amp;` (escaped twice) or `\u0026` (Go's JSON).
  const references = [`#(?:0*${codePoint}|[xX]0*${anyCaseHex(codePoint)})`, ...(NAMED_REFERENCES[character] ?? [])];
  spellings.push(`(?:&|${backslashes(first)}u0026)(?:amp;)*(?:${references.join("|")});?`);

  return `(?:${spellings.join("|")})`;
}

/** One secret's matcher: the secret with each character in any of its spellings. */
function secretPattern(secret: string, json: boolean): RegExp {
  // Character by character: code points (a lone surrogate on its own).
  return new RegExp([...secret].map((character, index) => characterPattern(character, json, index === 0)).join(""), "g");
}

/** The characters that end a run of plain characters inside a JSON string: its closing quote, an escape. */
const STRING_SPECIAL = /["\\]/g;

/** The length of the JSON escape at `index` (a backslash): `\uXXXX`, or a backslash and one character. */
function escapeLength(text: string, index: number): number {
  return text.charCodeAt(index + 1) === 0x75 ? 6 : 2;
}

/**
 * Where a JSON text's strings hold whole characters and escapes, read once from start to end whatever the number
 * of candidate matches: each question is about a place at or after the last one asked (the text's tokens are read
 * up to it from where the last question left off), and a run of plain characters is skipped at once.
 */
class JsonStrings {
  /** The start of a token: outside strings, any character; inside one, a character or a whole escape. */
  #at = 0;
  #inString = false;
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  /** Whether a character or an escape of a string starts at `index` (not inside an escape, not outside strings). */
  startsAt(index: number): boolean {
    this.#readTo(index);
    return this.#at === index && this.#inString;
  }

  /** Whether `index` lies outside every string (asked where startsAt did not hold). */
  outsideAt(index: number): boolean {
    this.#readTo(index);
    return this.#at === index && !this.#inString;
  }

  /** Reads the text's tokens up to `index`, or past it when an escape spans it. */
  #readTo(index: number): void {
    const text = this.text;
    while (this.#at < index) {
      if (!this.#inString) {
        const quote = text.indexOf('"', this.#at);
        if (quote === -1 || quote >= index) this.#at = index;
        else {
          this.#at = quote + 1;
          this.#inString = true;
        }
        continue;
      }
      STRING_SPECIAL.lastIndex = this.#at;
      const special = STRING_SPECIAL.exec(text);
      if (special === null || special.index >= index) this.#at = index;
      else if (text.charCodeAt(special.index) === 0x22) {
        this.#at = special.index + 1;
        this.#inString = false;
      } else this.#at = special.index + escapeLength(text, special.index);
    }
  }

  /**
   * Whether `start` to `end` (`start` where startsAt holds) is whole characters and escapes of that one string;
   * if so, the reading goes on from `end`. Read within the match only: its length bounds the cost.
   */
  holds(start: number, end: number): boolean {
    const text = this.text;
    let at = start;
    while (at < end) {
      const code = text.charCodeAt(at);
      if (code === 0x22) return false;
      at += code === 0x5c ? escapeLength(text, at) : 1;
    }
    if (at !== end) return false;
    this.#at = end;
    return true;
  }
}

/** What may stand beside a JSON value outside strings: a separator, a bracket, whitespace. */
const VALUE_BOUNDARY = /[\s,:[\]{}]/;

/** A fraction or an exponent that leaves a whole number's value as it is (`.0`, `.00e0`): Python writes a float so. */
const SAME_VALUE_TAIL = /(?:\.0+)?(?:[eE][+-]?0+)?/y;

/**
 * Where the number token of a JSON text (outside strings) that `start` to `end`, digits, begins ends, when the
 * token's value is those digits' (`73105829461`, `73105829461.0`); -1 when it is another number or none.
 */
function wholeNumberEnd(text: string, start: number, end: number): number {
  if (!(start === 0 || VALUE_BOUNDARY.test(text.charAt(start - 1))) || !/^\d+$/.test(text.slice(start, end))) return -1;
  SAME_VALUE_TAIL.lastIndex = end;
  const tokenEnd = end + (SAME_VALUE_TAIL.exec(text)?.[0].length ?? 0);
  return tokenEnd === text.length || VALUE_BOUNDARY.test(text.charAt(tokenEnd)) ? tokenEnd : -1;
}

function replaceMatches(text: string, pattern: RegExp, json: boolean): string {
  pattern.lastIndex = 0;
  let strings: JsonStrings | undefined; // read from the first match on: a text with none is not read again
  let scrubbed = "";
  let copied = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    // In JSON, a match must be whole characters and escapes of one string: not one that starts inside an escape
    // (the `n` of `\n`, the hex digits of `\u00e9`), not digits of a number (a password `12345678` in
    // `"rows":123456789`). Otherwise try one character on.
    let end = match.index + match[0].length;
    if (json) strings ??= new JsonStrings(text);
    let replacement = REDACTED;
    if (strings !== undefined && !(strings.startsAt(match.index) && strings.holds(match.index, end))) {
      // A secret of digits can also stand as a number of its value (an upstream that sends documented strings as
      // numbers echoes such a key so, a float's `.0` included): it becomes the marker as a string, which keeps the
      // text JSON.
      const numberEnd = strings.outsideAt(match.index) ? wholeNumberEnd(text, match.index, end) : -1;
      if (numberEnd === -1) {
        pattern.lastIndex = match.index + 1;
        continue;
      }
      replacement = `"${REDACTED}"`;
      end = numberEnd;
      pattern.lastIndex = end;
    }
    scrubbed += text.slice(copied, match.index) + replacement;
    copied = end;
  }
  return copied === 0 ? text : scrubbed + text.slice(copied);
}

/**
 * A function that replaces each secret, in any spelling (see above), by REDACTED; the text that holds none comes
 * back as it was, not copied. The matchers are built once: the function runs on every line written, and on
 * every answer's body.
 *
 * `json`: the text is JSON (an upstream answer, a log line), and stays valid JSON.
 */
export function secretScrubber(secrets: readonly string[], { json = false }: { json?: boolean } = {}): (text: string) => string {
  const distinct = [...new Set(secrets.filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length);
  const patterns = distinct.map((secret) => secretPattern(secret, json));
  return (text) => {
    let scrubbed = text;
    for (const pattern of patterns) scrubbed = replaceMatches(scrubbed, pattern, json);
    return scrubbed;
  };
}
