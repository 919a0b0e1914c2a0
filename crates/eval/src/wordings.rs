//! Several wordings of the same queries (ACORD's short, medium and long queries) scored side
//! by side: where each wording's run goes, and the table of their figures and spread.

use std::path::{Path, PathBuf};

/// `run.tsv` for the `medium` wording: `run.medium.tsv`.
pub fn wording_path(path: &Path, wording: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{wording}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{wording}"),
    };
    path.with_file_name(name)
}

/// Each wording's headline figures, their mean and the spread of NDCG@5 between wordings.
pub fn wording_summary(
    means: &[(String, precedent_metrics::MeanMetrics)],
    mean: &precedent_metrics::MeanMetrics,
) -> String {
    let pct = |v: Option<f64>| v.map_or("      –".to_string(), |v| format!("{:>7.1}", 100.0 * v));
    let mut out = format!(
        "\n{:<24} {:>7} {:>7} {:>7}\n",
        "wording", "NDCG@5", "NDCG@10", "4★P@5"
    );
    for (name, m) in means
        .iter()
        .map(|(w, m)| (w.as_str(), m))
        .chain([("mean", mean)])
    {
        out.push_str(&format!(
            "{:<24} {} {} {}\n",
            name,
            pct(Some(m.ndcg5)),
            pct(Some(m.ndcg10)),
            pct(m.p5_4star)
        ));
    }
    let ndcg5: Vec<f64> = means.iter().map(|(_, m)| m.ndcg5).collect();
    let spread = ndcg5.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - ndcg5.iter().copied().fold(f64::INFINITY, f64::min);
    out.push_str(&format!(
        "{:<24} {}\n",
        "spread of NDCG@5",
        pct(Some(spread))
    ));
    out
}
