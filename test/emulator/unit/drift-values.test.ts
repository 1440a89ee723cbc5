import { describe, expect, it } from "vitest";
import { PageDrift, deviatePage, pageBody } from "../../../src/emulator/drift/pages.ts";
import { runtimeSettings, type DriftKind } from "../../../src/emulator/options.ts";
import { MISSING, deviate, extraFields, otherDateTimeForm } from "../../../src/emulator/drift/values.ts";
import { Random } from "../../../src/emulator/random.ts";
import { instantMicros } from "../instants.ts";

/** What each drift kind makes of one value, and of one page window. */

describe("otherDateTimeForm", () => {
  const forms = (text: string) => new Set(Array.from({ length: 400 }, (_, seed) => otherDateTimeForm(text, new Random(seed))));

  it.each(["2026-05-01T12:00:00.123Z", "2026-05-31T23:30:00.000Z", "2026-01-01T00:10:00.123456Z", "2026-03-01T01:00:00.999Z"])(
    "%s: every form denotes the same instant, and none is the clean text",
    (text) => {
      for (const form of forms(text)) {
        expect(instantMicros(form), form).toBe(instantMicros(text));
        expect(form).not.toBe(text);
      }
    },
  );

  it("offers +00:00, a shifted offset, a space, microsecond digits, and no fraction when it is zero", () => {
    const some = [...forms("2026-05-01T12:00:00.123Z")];
    expect(some).toContain("2026-05-01T12:00:00.123+00:00");
    expect(some).toContain("2026-05-01T14:00:00.123+02:00");
    expect(some).toContain("2026-05-01T07:00:00.123-05:00");
    expect(some).toContain("2026-05-01T17:30:00.123+05:30");
    expect(some).toContain("2026-05-01 12:00:00.123Z");
    expect(some).toContain("2026-05-01T12:00:00.123000Z");
    expect([...forms("2026-05-01T12:00:00.000Z")]).toContain("2026-05-01T12:00:00Z");
    expect(some).not.toContain("2026-05-01T12:00:00Z");
    // A time already to the microsecond keeps its six digits in every form.
    for (const form of forms("2026-05-01T12:00:00.123456Z")) expect(form).toMatch(/\.123456/);
  });
});

describe("deviate", () => {
  const random = () => new Random(3);

  it("null and missing; nothing when the value is already null", () => {
    expect(deviate("null", 5, random())).toEqual({ value: null });
    expect(deviate("null", null, random())).toBeUndefined();
    expect(deviate("missing", null, random())).toBe(MISSING);
  });

  it("numeric-string parses back to the integer; boolean-form is true/false text or 1/0", () => {
    expect(deviate("numeric-string", 42, random())).toEqual({ value: "42" });
    expect(deviate("numeric-string", null, random())).toBeUndefined();
    const forms = new Set(Array.from({ length: 50 }, (_, seed) => JSON.stringify(deviate("boolean-form", true, new Random(seed)))));
    expect(forms).toEqual(new Set([JSON.stringify({ value: "true" }), JSON.stringify({ value: 1 })]));
    expect(deviate("boolean-form", false, new Random(1))).not.toEqual({ value: false });
  });

  it("extra fields never reuse a name the record has, and the same draws give the same extras", () => {
    const record = { id: 1, tags: ["kept"], meta: null };
    for (let seed = 0; seed < 50; seed++) {
      const extras = extraFields(record, new Random(seed));
      expect(extras.length).toBeGreaterThan(0);
      for (const [name] of extras) expect(name in record).toBe(false);
      expect(extraFields(record, new Random(seed))).toEqual(extras);
    }
  });
});

describe("deviatePage", () => {
  const window = { offset: 0, limit: 100, total: 240 };

  it("page-cap caps at 50, 25 or half the limit, and only when more records remain after the cap", () => {
    expect(deviatePage({ kind: "page-cap", shift: 1 }, window)).toEqual({ offset: 0, limit: 50, total: 240 });
    expect(deviatePage({ kind: "page-cap", shift: 1 }, { offset: 0, limit: 40, total: 240 }).limit).toBe(25);
    expect(deviatePage({ kind: "page-cap", shift: 1 }, { offset: 0, limit: 10, total: 240 }).limit).toBe(5);
    expect(deviatePage({ kind: "page-cap", shift: 1 }, { offset: 200, limit: 100, total: 240 })).toEqual({ offset: 200, limit: 100, total: 240 });
    expect(deviatePage({ kind: "page-cap", shift: 1 }, { offset: 0, limit: 1, total: 240 }).limit).toBe(1);
  });

  it("total-off shifts the total, never below zero", () => {
    expect(deviatePage({ kind: "total-off", shift: -3 }, window).total).toBe(237);
    expect(deviatePage({ kind: "total-off", shift: -3 }, { offset: 0, limit: 10, total: 1 }).total).toBe(4);
  });

  it("total-missing serves the asked window, its body without a usable total in one of three forms", () => {
    expect(deviatePage({ kind: "total-missing", shift: 2 }, window)).toEqual(window);
    expect(pageBody({ kind: "total-missing", shift: -1 }, ["a"], 240)).toEqual({ data: ["a"] });
    expect(pageBody({ kind: "total-missing", shift: 2 }, ["a"], 240)).toEqual({ data: ["a"], total: null });
    expect(pageBody({ kind: "total-missing", shift: 3 }, ["a"], 240)).toEqual(["a"]);
    expect(pageBody({ kind: "total-off", shift: 3 }, ["a"], 240)).toEqual({ data: ["a"], total: 240 });
  });

  it("draws total-missing only when it is named", () => {
    const drawn = (driftKinds?: DriftKind[]) => {
      const drift = new PageDrift(7);
      const kinds = new Set<string>();
      for (let request = 0; request < 2_000; request++) {
        const deviation = drift.draw({ ...runtimeSettings.parse({ drift: "wild" }), driftKinds });
        if (deviation) kinds.add(deviation.kind);
      }
      return kinds;
    };
    expect(drawn()).toEqual(new Set(["page-cap", "total-off", "page-repeat"]));
    expect(drawn(["total-missing", "page-cap"])).toEqual(new Set(["total-missing", "page-cap"]));
  });

  it("page-repeat starts one early, never on the first page or past the end", () => {
    expect(deviatePage({ kind: "page-repeat", shift: 1 }, { offset: 100, limit: 100, total: 240 })).toEqual({ offset: 99, limit: 100, total: 240 });
    expect(deviatePage({ kind: "page-repeat", shift: 1 }, window)).toEqual(window);
    expect(deviatePage({ kind: "page-repeat", shift: 1 }, { offset: 240, limit: 100, total: 240 }).offset).toBe(240);
  });
});
