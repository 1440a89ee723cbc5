import { describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES } from "../../src/http/metrics.ts";

/**
 * prom-client keeps every label set a counter was ever incremented with, for the life of the process. A deviating
 * field's path names the keys of what it sits in, and inside a field the spec does not know those are the
 * upstream's data (a lead's custom fields, keyed by a customer's CSV columns): a worker that runs for months must
 * not grow a series for each.
 */

describe("coldsync_field_issues_total", () => {
  it("takes a bounded number of field labels, and counts the issues of the rest under (other)", async () => {
    const metrics = createMetrics();
    const observer = metrics.syncObserver;
    for (let column = 0; column < 1_000; column += 1) observer.onFieldIssues?.("leads", `leads.custom_fields.Column ${column}`, 1);
    observer.onFieldIssues?.("leads", "leads.custom_fields.Column 0", 2);

    const values = (await metrics.registry.getSingleMetric(METRIC_NAMES.fieldIssues)?.get())?.values ?? [];
    expect(values.length).toBeLessThanOrEqual(201);
    expect(values.reduce((sum, value) => sum + value.value, 0)).toBe(1_002);
    // A label taken before the bound keeps counting under its own name.
    expect(values.find((value) => value.labels.field === "leads.custom_fields.Column 0")?.value).toBe(3);
    expect(values.find((value) => value.labels.field === "(other)")?.value).toBe(800);
  });
});
