// The statistics every section of the benchmark reports with (bench.mjs, secrets.mjs).

// The q-quantile of already sorted samples, interpolated between the two nearest.
export function quantile(sorted, q) {
    if (sorted.length === 0) return NaN;
    const pos = (sorted.length - 1) * q;
    const lo = Math.floor(pos);
    const hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// Count, min, p50, p95, max and mean of samples in any order (NaN where there are none).
export function summarize(samples) {
    const s = [...samples].sort((a, b) => a - b);
    return {
        n: s.length,
        min: s[0] ?? NaN,
        p50: quantile(s, 0.5),
        p95: quantile(s, 0.95),
        max: s[s.length - 1] ?? NaN,
        mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN,
    };
}
