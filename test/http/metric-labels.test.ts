import { describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES } from "../../src/http/metrics.ts";

/**
 * prom-client keeps every label set a counter was ever incremented with, for the life of the process. A deviating
 * field's path names the keys of what it sits in, and inside a field the spec does not know those are the
 * upstream's data (a lead's custom fields, keyed by a customer's CSV columns): a worker that runs for months must
 * not grow a series for each, nor let such a field take the labels of the fields the spec knows.
 */

describe("coldsync_field_issues_total", () => {
  it("takes a bounded number of labels under one field of a record, and counts the rest as that field's (other)", async () => {
    const metrics = createMetrics();
    const observer = metrics.syncObserver;
    for (let column = 0; column < 1_000; column += 1) observer.onFieldIssues?.("leads", `leads.custom_fields.Column ${column}`, 1);
    observer.onFieldIssues?.("leads", "leads.custom_fields.Column 0", 2);
    // A field the spec knows, met after the flood, keeps its own label.
    observer.onFieldIssues?.("leads", "schedules.status", 4);

    const values = (await metrics.registry.getSingleMetric(METRIC_NAMES.fieldIssues)?.get())?.values ?? [];
    const count = (field: string) => values.find((value) => value.labels.field === field)?.value;
    expect(values.length).toBeLessThanOrEqual(52);
    expect(values.reduce((sum, value) => sum + value.value, 0)).toBe(1_006);
    expect([count("leads.custom_fields.Column 0"), count("leads.custom_fields.(other)"), count("schedules.status")]).toEqual([3, 950, 4]);
  });
});
