//! Prints what each query-constraint reader makes of queries given one per line on stdin, so a
//! new reader can be checked against every query before measuring it.
use std::io::BufRead;

fn main() -> std::io::Result<()> {
    for line in std::io::stdin().lock().lines() {
        let query = line?;
        let mut found = Vec::new();
        for e in precedent_text::exclusions(&query) {
            found.push(format!("excludes {:?}", e.surface_forms));
        }
        for i in precedent_text::inclusions(&query) {
            found.push(format!("requires {:?}", i.alternatives));
        }
        if let Some(side) = precedent_text::favoured_side(&query) {
            found.push(format!("side {side:?}"));
        }
        for l in precedent_text::required_limits(&query) {
            found.push(format!("limit {l:?}"));
        }
        if let Some(r) = precedent_text::wanted_reciprocity(&query) {
            found.push(format!("reciprocity {r:?}"));
        }
        if let Some(c) = precedent_text::wanted_claim_source(&query) {
            found.push(format!("claims {c:?}"));
        }
        if let Some(b) = precedent_text::wanted_claim_breadth(&query) {
            found.push(format!("breadth {b:?}"));
        }
        if let Some(kind) = precedent_text::wanted_solicited(&query) {
            found.push(format!("solicited {kind:?}"));
        }
        if let Some(d) = precedent_text::wanted_duration(&query) {
            found.push(format!("duration {d:?}"));
        }
        if precedent_text::wants_several_laws(&query) {
            found.push("several laws".to_owned());
        }
        if let Some(r) = precedent_text::wanted_renewal(&query) {
            found.push(format!("renewal {r:?}"));
        }
        if precedent_text::wants_liability_limit(&query) {
            found.push("limits liability".to_owned());
        }
        if precedent_text::wants_fixed_cap(&query) {
            found.push("fixed-sum cap".to_owned());
        }
        if precedent_text::wants_cap(&query) {
            found.push("states a cap".to_owned());
        }
        if let Some(months) = precedent_text::wanted_cap_period(&query) {
            found.push(format!("cap period {months} months"));
        }
        if precedent_text::wants_damages_waiver(&query) {
            found.push("names the waived damages".to_owned());
        }
        if precedent_text::wants_liquidated_damages(&query) {
            found.push("liquidated damages".to_owned());
        }
        println!("{query}\n    {}", found.join("; "));
    }
    Ok(())
}
