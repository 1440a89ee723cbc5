import { describe, expect, it } from "vitest";
import { parseJson, UnroundedNumber } from "../../src/upstream/exact-json.ts";
import { readRecord } from "../../src/upstream/parsing.ts";

describe("parseJson", () => {
  it("keeps as text each number a double would round, and reads every other number as JSON.parse does", () => {
    const { value, exact } = parseJson('{"id": 12345678901234567890, "n": 7, "f": 1.50, "e": 1e400, "digits": 0.12345678901234567891, "s": "12345678901234567890"}');
    expect(exact).toBe(true);
    expect(value).toEqual({
      id: new UnroundedNumber("12345678901234567890"),
      n: 7,
      f: 1.5,
      e: new UnroundedNumber("1e400"),
      digits: new UnroundedNumber("0.12345678901234567891"),
      s: "12345678901234567890",
    });
  });

  it("parses an answer without a long number with JSON.parse, and says so", () => {
    expect(parseJson('{"id": 900719925474099, "at": "2026-01-01T00:00:00Z"}')).toEqual({ value: { id: 900719925474099, at: "2026-01-01T00:00:00Z" }, exact: false });
  });

  it("reads a field named twice as JSON.parse does (the last value), keeping the answer's long numbers", () => {
    expect(parseJson('{"a": 1, "a": 2, "id": 12345678901234567890}')).toEqual({ value: { a: 2, id: new UnroundedNumber("12345678901234567890") }, exact: true });
  });

  it("sees a long number after a colon with space before it (`\"id\" : 1`, as Jackson pretty-prints) and one only inside a list", () => {
    expect(parseJson('{"id" : 12345678901234567890}').value).toEqual({ id: new UnroundedNumber("12345678901234567890") });
    expect(parseJson('{"ids": [7, 12345678901234567890]}').value).toEqual({ ids: [7, new UnroundedNumber("12345678901234567890")] });
  });

  it("reads a number a double holds exactly as JSON.parse does, whatever else the answer holds (its row must not change with a neighbour)", () => {
    const neighbour = ', "ref": 12345678901234567890';
    for (const number of ["1e20", "100000000000000000000", "9007199254740994", "0.30000000000000004", "1.50", "-0", "2.5E+300", "5e-324"]) {
      const alone = JSON.parse(`{"n": ${number}}`) as { n: number };
      const { value, exact } = parseJson(`{"n": ${number}${neighbour}}`);
      expect({ number, exact, n: (value as { n: unknown }).n }).toEqual({ number, exact: true, n: alone.n });
    }
  });

  it("throws on text that is not JSON, long number or not", () => {
    expect(() => parseJson('{"id": 12345678901234567890')).toThrow(SyntaxError);
    expect(() => parseJson("<html>")).toThrow(SyntaxError);
  });

  it("reads the bare NaN, Infinity and -Infinity Python writes as text, outside strings only, and says so", () => {
    const text = '{"a":NaN,"b":[Infinity,-Infinity],"c":"NaN and Infinity","d":-5}';
    expect(parseJson(text)).toEqual({ value: { a: "NaN", b: ["Infinity", "-Infinity"], c: "NaN and Infinity", d: -5 }, exact: false, nonFiniteNumbers: true });
    expect(() => parseJson('{"a":Nope}')).toThrow();
  });

  it("keeps a field named __proto__ an own field", () => {
    const { value } = parseJson('{"__proto__": {"polluted": 12345678901234567890}}');
    expect(Object.hasOwn(value as object, "__proto__")).toBe(true);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe("a record read from an exact parse", () => {
  it("reads a JSON number with a fraction past a double's digits as a fraction, not as the integer JSON.parse rounds it to", () => {
    const sequence = { subject: "s", body: "b", order: 1, next_message_days: 2, score: 80, verdict: "v", suggestions: [], label: "passed", blocked_reason: "", is_flagged_for_approval: false, block_approval: false, email_content_type: "text/html" };
    const text = JSON.stringify({ ...sequence, id: "ID" }).replace('"ID"', "1001.00000000000000001");
    expect(JSON.parse(text)).toMatchObject({ id: 1001 });
    const outcome = readRecord("email_sequences", parseJson(text).value);
    expect("rejected" in outcome && outcome.rejected.reason).toBe("id: expected an integer, got a fraction; not stored (a key field, so the record cannot be placed)");
  });
});

describe("parseJson of text whose strings hold raw control characters", () => {
  it("reads them as if escaped, says so, and leaves such characters between tokens alone", () => {
    const text = '{\n\t"body": "Thanks,\tsee below\nBest",\r\n "quoted": "a \\" then\ta tab", "id": 12345678901234567890}';
    const parsed = parseJson(text);
    expect(parsed.controlCharacters).toBe(true);
    expect(parsed.value).toEqual({ body: "Thanks,\tsee below\nBest", quoted: 'a " then\ta tab', id: new UnroundedNumber("12345678901234567890") });
    expect(parseJson('{\n\t"body": "plain"\n}').controlCharacters).toBeUndefined();
  });

  it("still refuses text that is not JSON for another reason", () => {
    expect(() => parseJson('[{"body": "cut\there')).toThrow(SyntaxError);
  });
});
