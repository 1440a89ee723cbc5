import { describe, expect, it } from "vitest";
import { editDistance, nearest } from "../src/edit-distance.ts";

describe("editDistance", () => {
  it("counts an insertion, a deletion, a replacement and a swap of neighbours as one edit each", () => {
    expect(editDistance("RATE_LIMIT", "RATE_LIMIT")).toBe(0);
    expect(editDistance("RATE_LIMT", "RATE_LIMIT")).toBe(1);
    expect(editDistance("RATE_LIMITT", "RATE_LIMIT")).toBe(1);
    expect(editDistance("RATE_LIMOT", "RATE_LIMIT")).toBe(1);
    expect(editDistance("RATE_LIMTI", "RATE_LIMIT")).toBe(1);
  });

  it("is symmetric and reaches the longer length against an empty string", () => {
    expect(editDistance("", "")).toBe(0);
    expect(editDistance("", "PORT")).toBe(4);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("sitting", "kitten")).toBe(3);
  });
});

describe("nearest", () => {
  const names = ["COLDSYNC_RATE_LIMIT", "COLDSYNC_HTTP_PORT", "COLDSYNC_HTTP_HOST"];

  it("names the nearest candidate within reach, and none beyond it", () => {
    expect(nearest("COLDSYNC_RATE_LIMT", names, 3)).toBe("COLDSYNC_RATE_LIMIT");
    expect(nearest("COLDSYNC_HTTP_PROT", names, 3)).toBe("COLDSYNC_HTTP_PORT");
    expect(nearest("COLDSYNC_PORT", names, 3)).toBeUndefined();
    expect(nearest("COLDSYNC_RATE_LIMIT", [], 3)).toBeUndefined();
  });
});
