//! Which CUAD clause types each query (one per line on stdin) names, as the learned ranker's
//! clause-type rule reads them: `cargo run -p precedent-tools --bin named_types < queries.txt`.
use std::io::BufRead;

use precedent_cuad::{named_in_query, CATEGORIES};

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let bits = named_in_query(&line);
        let names: Vec<&str> = (0..CATEGORIES.len())
            .filter(|k| bits & (1 << k) != 0)
            .map(|k| CATEGORIES[k])
            .collect();
        println!("{line}\n    {names:?}");
    }
}
