import { describe, expect, it } from "vitest";
import { epochInstant, parseInstant } from "../../src/upstream/instant.ts";

describe("parseInstant", () => {
  it.each([
    ["2023-12-22T10:31:16.286Z", "2023-12-22T10:31:16.286000Z"],
    ["2023-12-22T10:31:16Z", "2023-12-22T10:31:16.000000Z"],
    ["2023-12-22T10:31:16.1Z", "2023-12-22T10:31:16.100000Z"],
    ["2023-12-22T10:31:16.123456Z", "2023-12-22T10:31:16.123456Z"],
    ["2024-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000000Z"],
    ["2000-02-29T23:59:59.999Z", "2000-02-29T23:59:59.999000Z"],
    ["2024-04-30T12:00:00Z", "2024-04-30T12:00:00.000000Z"],
    ["2024-04-30T12:00:00.12345Z", "2024-04-30T12:00:00.123450Z"],
  ])("reads the plain UTC form %s by its digits", (text, canonical) => {
    expect(parseInstant(text)).toBe(canonical);
  });

  it.each([["2023-02-29T00:00:00.000Z"], ["1900-02-29T00:00:00Z"], ["2024-04-31T00:00:00Z"], ["2024-13-01T00:00:00Z"], ["2024-00-10T00:00:00Z"], ["2023-02-29T00:00:00.000000Z"]])(
    "refuses %s, a date that does not exist",
    (text) => {
      expect(parseInstant(text)).toBeNull();
    },
  );

  it.each([
    ["2024-03-01T24:00:00Z", "2024-03-02T00:00:00.000000Z"],
    ["2024-03-01T23:59:60Z", "2024-03-02T00:00:00.000000Z"],
    ["2024-03-01T10:00:00.1234567Z", "2024-03-01T10:00:00.123457Z"],
    ["2024-03-01T12:00:00+02:00", "2024-03-01T10:00:00.000000Z"],
    ["20240301T100000Z", "2024-03-01T10:00:00.000000Z"],
    ["2024-03-01 10:00:00.5Z", "2024-03-01T10:00:00.500000Z"],
    ["2024-03-02T05:29:60+05:30", "2024-03-02T00:00:00.000000Z"],
  ])("reads the other ISO forms %s as before", (text, canonical) => {
    expect(parseInstant(text)).toBe(canonical);
  });

  it.each([["2026-05-01T24:30:00Z"], ["2026-05-01T24:00:00.5Z"], ["2026-05-01T10:00:60.5Z"], ["2026-05-01T23:59:60+02:00"]])(
    "refuses %s: hour 24 is only the day's end (24:00:00), and a second 60 only the leap second that ends a UTC day",
    (text) => {
      expect(parseInstant(text)).toBeNull();
    },
  );

  it.each([["9999-12-31T23:00:00-05:00"], ["0001-01-01T00:30:00+01:00"]])("refuses %s, whose offset carries it out of years 1 to 9999 (a form PostgreSQL refuses)", (text) => {
    expect(parseInstant(text)).toBeNull();
  });

  it.each([
    ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"],
    ["0050-06-01T00:00:00.5Z", "0050-06-01T00:00:00.500000Z"],
    ["0999-12-31T23:59:59Z", "0999-12-31T23:59:59.000000Z"],
    ["0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00.000000Z"],
    ["0050-06-01 02:00:00+02:00", "0050-06-01T00:00:00.000000Z"],
    ["0099-12-31T23:59:59.9999999Z", "0100-01-01T00:00:00.000000Z"],
    ["0004-02-29T00:00:00Z", "0004-02-29T00:00:00.000000Z"],
  ])("reads %s, of a year before 100, as that instant (not as 19xx)", (text, canonical) => {
    expect(parseInstant(text)).toBe(canonical);
  });

  it.each([["0000-01-01T00:00:00Z"], ["0000-06-01T00:00:00+00:00"], ["9999-12-31T23:59:59.9999999Z"], ["0003-02-29T00:00:00Z"]])(
    "refuses %s: year 0, a fraction that rounds past 9999-12-31, or a date that does not exist",
    (text) => {
      expect(parseInstant(text)).toBeNull();
    },
  );

  it.each([
    ["2026-05-01t10:00:00z", "2026-05-01T10:00:00.000000Z"],
    ["2026-05-01t10:00:00Z", "2026-05-01T10:00:00.000000Z"],
    ["2026-05-01T10:00:00z", "2026-05-01T10:00:00.000000Z"],
    ["2026-05-01t12:00:00.5+02:00", "2026-05-01T10:00:00.500000Z"],
  ])("reads %s, a lower-case `t` or `z` (RFC 3339 allows either case), as that instant", (text, canonical) => {
    expect(parseInstant(text)).toBe(canonical);
  });

  it("refuses a fraction point with no digits", () => {
    expect(parseInstant("2024-03-01T10:00:00.Z")).toBeNull();
  });
});

describe("a date-time in Ruby's UTC form, and as Unix epoch values", () => {
  it.each([
    ["2026-05-01 09:00:00 UTC", "2026-05-01T09:00:00.000000Z"],
    ["2026-05-01 09:00:00.5 GMT", "2026-05-01T09:00:00.500000Z"],
  ])("reads %s", (text, canonical) => {
    expect(parseInstant(text)).toBe(canonical);
  });

  it.each([
    [1777626000, { instant: "2026-05-01T09:00:00.000000Z", unit: "seconds" }],
    [1777626000.123456, { instant: "2026-05-01T09:00:00.123456Z", unit: "seconds" }],
    [1777626000123, { instant: "2026-05-01T09:00:00.123000Z", unit: "milliseconds" }],
    [1e9, { instant: "2001-09-09T01:46:40.000000Z", unit: "seconds" }],
    [1e12, { instant: "2001-09-09T01:46:40.000000Z", unit: "milliseconds" }],
  ])("reads %s by its magnitude", (value, read) => {
    expect(epochInstant(value)).toEqual(read);
  });

  it.each([[0], [999_999_999], [-1777626000], [1e10], [202605010930], [1e13], [20260501093000], [Number.NaN], [Number.POSITIVE_INFINITY]])("names no instant for %s", (value) => {
    expect(epochInstant(value)).toBeNull();
  });
});

