import { describe, expect, it } from "vitest";
import { listingOf } from "../../src/upstream/listing-answer.ts";

describe("a listing answer of data: null", () => {
  it("is an empty listing, its total dropped, beside markers that say there is no error", () => {
    for (const body of [null, { data: null, total: 0 }, { data: null, error: false }, { data: null, errors: [] }, { data: null, errors: {} }, { data: null, message: "" }]) {
      expect({ body, read: listingOf(body) }).toEqual({ body, read: { data: [], total: null } });
    }
  });

  it("is a protocol error beside an error (an outage answered as 200), naming it", () => {
    expect(listingOf({ data: null, errors: [{ message: "timed out" }] })).toBe('no records but an error beside "data": null: [{"message":"timed out"}]');
    expect(listingOf({ data: null, message: "Internal error" })).toBe('no records but an error beside "data": null: Internal error');
    expect(listingOf({ data: null, error: true })).toBe('no records but an error beside "data": null: true');
  });
});
