//! `precedent ingest` on a folder of real and broken contracts, then `precedent search` with
//! filters over the library it built; clause types written at ingest and `search --type`.

mod support;

use std::path::Path;
use std::process::{Command, Output};

const CUAD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/cuad/full_contract_txt"
);
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../contracts/tests/fixtures");

fn precedent(args: &[&str]) -> Output {
    support::precedent_command()
        .args(args)
        .output()
        .expect("run precedent")
}

fn copy_cuad(name: &str, to: &Path) {
    std::fs::copy(Path::new(CUAD).join(name), to.join(name)).expect("copy contract");
}

fn report(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("report")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn status_of<'a>(report: &'a [serde_json::Value], file: &str) -> &'a serde_json::Value {
    report
        .iter()
        .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(file)))
        .unwrap_or_else(|| panic!("{file} not in report {report:#?}"))
}

#[test]
fn ingest_reports_bad_files_keeps_the_rest_and_resumes() {
    let work = tempfile::tempdir().expect("tempdir");
    let folder = work.path().join("contracts");
    let nested = folder.join("nested");
    std::fs::create_dir_all(&nested).expect("mkdir");
    let twothemart = "2ThemartComInc_19990826_10-12G_EX-10.10_6700288_EX-10.10_Co-Branding Agreement_ Agency Agreement.txt";
    copy_cuad(twothemart, &folder);
    for f in ["franchise.pdf", "franchise.docx", "franchise.html"] {
        std::fs::copy(Path::new(FIXTURES).join(f), nested.join(f)).expect("copy fixture");
    }
    // The broken ones: a corrupt PDF, a binary file named .txt, an empty file, a 100 MB file.
    std::fs::write(folder.join("corrupt.pdf"), b"%PDF-1.4\n1 0 obj garbage").expect("write");
    let mut binary = b"\x7fELF\x02\x01\x01\x00".to_vec();
    binary.extend((0u8..=255).cycle().take(10_000));
    std::fs::write(folder.join("program.txt"), binary).expect("write");
    std::fs::write(folder.join("empty.txt"), b"").expect("write");
    std::fs::File::create(folder.join("huge.txt"))
        .and_then(|f| f.set_len(100 * 1024 * 1024))
        .expect("sparse file");
    std::fs::write(folder.join("notes.md"), b"# not a contract").expect("write");

    let lib = work.path().join("lib");
    let lib_s = lib.to_str().expect("utf-8 path");
    let folder_s = folder.to_str().expect("utf-8 path");
    let report_path = work.path().join("report.jsonl");
    let report_s = report_path.to_str().expect("utf-8 path");
    let ingest = || {
        precedent(&[
            "ingest",
            folder_s,
            "--index",
            lib_s,
            "--no-vectors",
            "--no-types",
            "--report",
            report_s,
        ])
    };
    let out = ingest();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "partial failure must be an error exit: {stderr}"
    );
    assert!(
        stderr.contains("4 file(s) could not be ingested"),
        "{stderr}"
    );

    let first = report(&report_path);
    for (file, reason) in [
        ("corrupt.pdf", "not a readable PDF file"),
        ("program.txt", "binary data, not text"),
        ("empty.txt", "empty file"),
        ("huge.txt", "file too large"),
    ] {
        let r = status_of(&first, file);
        assert_eq!(r["status"], "failed", "{r}");
        let why = r["reason"].as_str().unwrap_or_default();
        assert!(why.contains(reason) && why.contains(file), "{file}: {why}");
        assert!(stderr.contains(why), "{stderr}");
    }
    assert_eq!(status_of(&first, "notes.md")["status"], "skipped");
    let mut ingested_clauses = 0;
    for file in [
        twothemart,
        "franchise.pdf",
        "franchise.docx",
        "franchise.html",
    ] {
        let r = status_of(&first, file);
        assert_eq!(r["status"], "ingested", "{r}");
        assert!(r["clauses"].as_u64().unwrap_or(0) >= 10, "{r}");
        ingested_clauses += r["clauses"].as_u64().unwrap_or(0);
    }

    // Search with filters: the co-branding agreement is California law; the franchise (three
    // copies, three formats) is Roanoke Gas Company's, dated 17 November 2015.
    let search = |query: &str, extra: &[&str]| {
        let mut args = vec!["search", "--index", lib_s, "--json", "-k", "5", query];
        args.extend_from_slice(extra);
        let out = precedent(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        json["hits"].as_array().cloned().unwrap_or_default()
    };
    let hits = search("termination", &["--law", "california"]);
    assert!(!hits.is_empty());
    for h in &hits {
        assert!(h["metadata"]["clause_types"].is_null(), "--no-types: {h}");
        assert_eq!(h["metadata"]["governing_law"], "California", "{h}");
        assert_eq!(
            h["metadata"]["contract"],
            twothemart.trim_end_matches(".txt")
        );
    }
    let hits = search(
        "franchise fee",
        &[
            "--party",
            "roanoke gas",
            "--from",
            "2015",
            "--to",
            "2015-12",
        ],
    );
    assert!(!hits.is_empty());
    for h in &hits {
        assert_eq!(h["metadata"]["date"], "2015-11-17", "{h}");
    }
    assert!(search(
        "franchise fee",
        &["--doc-type", "franchise", "--to", "2014"]
    )
    .is_empty());
    let bad = precedent(&["search", "--index", lib_s, "x", "--from", "March 2018"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a date"));

    // Resume: fix one broken file, add a new contract; what was indexed stays, nothing twice.
    std::fs::remove_file(folder.join("huge.txt")).expect("rm");
    std::fs::remove_file(folder.join("program.txt")).expect("rm");
    std::fs::remove_file(folder.join("corrupt.pdf")).expect("rm");
    std::fs::write(
        folder.join("empty.txt"),
        "1. Term. This Agreement lasts one year.\n\n2. Fees. Buyer pays all fees.\n",
    )
    .expect("write");
    // While another writer holds the library (here: its lock, taken as a second `ingest`
    // would), the run is refused at once with the reason, and the library is left as it was.
    let writer = std::fs::File::open(lib.join("LOCK")).expect("lock file");
    writer
        .try_lock()
        .expect("no writer left behind by the first run");
    let out = ingest();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another process is writing this library"),
        "{stderr}"
    );
    drop(writer);
    let out = ingest();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = report(&report_path);
    assert_eq!(status_of(&second, twothemart)["status"], "already-indexed");
    assert_eq!(
        status_of(&second, "franchise.pdf")["status"],
        "already-indexed"
    );
    assert_eq!(status_of(&second, "empty.txt")["status"], "ingested");
    assert_eq!(status_of(&second, "empty.txt")["clauses"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!(
        "library {ingested_clauses} → {} clauses",
        ingested_clauses + 2
    );
    assert!(stderr.contains(&expected), "{stderr}");

    // A contract edited since it was indexed is read again and its clauses replaced (same ids,
    // no duplicates); the unchanged ones are left alone.
    std::fs::write(
        folder.join("empty.txt"),
        "1. Term. This Agreement lasts two years.\n\n2. Fees. Buyer pays all fees.\n\n3. Notices. Notices are given in writing.\n",
    )
    .expect("write");
    let out = ingest();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let third = report(&report_path);
    assert_eq!(status_of(&third, "empty.txt")["status"], "re-ingested");
    assert_eq!(status_of(&third, "empty.txt")["clauses"], 3);
    assert_eq!(status_of(&third, twothemart)["status"], "already-indexed");
    let expected = format!(
        "library {} → {} clauses",
        ingested_clauses + 2,
        ingested_clauses + 3
    );
    assert!(stderr.contains(&expected), "{stderr}");
    let term = search("agreement lasts years", &[]);
    let texts: Vec<&str> = term.iter().filter_map(|h| h["text"].as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("two years")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("one year")), "{texts:?}");

    // `remove` takes a contract out; an unknown id is refused and nothing changes.
    let contract = twothemart.trim_end_matches(".txt");
    let bad = precedent(&["remove", "--index", lib_s, contract, "no-such-contract"]);
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("\"no-such-contract\""), "{stderr}");
    assert!(!search("termination", &["--law", "california"]).is_empty());
    let out = precedent(&["remove", "--index", lib_s, contract]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let removed = status_of(&first, twothemart)["clauses"]
        .as_u64()
        .unwrap_or(0);
    let expected = format!(
        "removed {removed} clauses from {lib_s} ({} → {})",
        ingested_clauses + 3,
        ingested_clauses + 3 - removed
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(search("termination", &["--law", "california"]).is_empty());
    assert!(!search("franchise fee", &["--party", "roanoke gas"]).is_empty());
}

/// A contract is the file at its path: a file of an indexed contract's name in another folder
/// (two deal folders that each hold `agreement.txt`) is another contract with an id of its own,
/// never a new version that replaces the first; the same bytes at another path are not ingested
/// twice.
#[test]
fn a_file_of_the_same_name_elsewhere_is_another_contract() {
    let work = tempfile::tempdir().expect("tempdir");
    let (acme, beta, moved) = (
        work.path().join("acme"),
        work.path().join("beta"),
        work.path().join("moved"),
    );
    for dir in [&acme, &beta, &moved] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let cuad = Path::new(CUAD);
    let co_branding = "2ThemartComInc_19990826_10-12G_EX-10.10_6700288_EX-10.10_Co-Branding Agreement_ Agency Agreement.txt";
    let services = "ABILITYINC_06_15_2020-EX-4.25-SERVICES AGREEMENT.txt";
    std::fs::copy(cuad.join(co_branding), acme.join("agreement.txt")).expect("copy");
    std::fs::copy(cuad.join(services), beta.join("agreement.txt")).expect("copy");
    std::fs::copy(cuad.join(co_branding), moved.join("co-branding.txt")).expect("copy");

    let lib = work.path().join("lib");
    let report_path = work.path().join("report.jsonl");
    let ingest_with = |folder: &Path, vectors: bool| {
        let mut args = vec![
            "ingest",
            folder.to_str().expect("utf-8 path"),
            "--index",
            lib.to_str().expect("utf-8 path"),
            "--no-types",
            "--report",
            report_path.to_str().expect("utf-8 path"),
        ];
        if !vectors {
            args.push("--no-vectors");
        }
        let out = precedent(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        (report(&report_path), stderr)
    };
    let ingest = |folder: &Path| ingest_with(folder, false).0;
    let first = ingest(&acme);
    let acme_clauses = status_of(&first, "agreement.txt")["clauses"]
        .as_u64()
        .unwrap_or(0);
    assert_eq!(status_of(&first, "agreement.txt")["contract"], "agreement");

    // Without --no-vectors into a library built without vectors: said, and BM25 only.
    let (second, stderr) = ingest_with(&beta, true);
    assert!(stderr.contains("was built without vectors"), "{stderr}");
    let beta_report = status_of(&second, "agreement.txt");
    assert_eq!(beta_report["status"], "ingested", "{beta_report}");
    assert_eq!(beta_report["contract"], "agreement~2", "{beta_report}");
    let beta_clauses = beta_report["clauses"].as_u64().unwrap_or(0);

    // Both contracts are in the library, each under its own id.
    let lib_s = lib.to_str().expect("utf-8 path");
    let contracts_of = |query: &str| {
        let out = precedent(&["search", "--index", lib_s, "--json", "-k", "50", query]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        json["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|h| h["metadata"]["contract"].as_str().map(str::to_owned))
            .collect::<std::collections::HashSet<String>>()
    };
    assert!(contracts_of("co-branding agreement").contains("agreement"));
    // `--json` cites each hit as the text output does: the section with its parents.
    let out = precedent(&[
        "search",
        "--index",
        lib_s,
        "--json",
        "-k",
        "10",
        "termination",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let hits = json["hits"].as_array().cloned().unwrap_or_default();
    assert!(!hits.is_empty());
    for h in &hits {
        let cited = h["citation"].as_str().unwrap_or_default();
        if let Some(section) = h["metadata"]["section"].as_str() {
            assert!(
                cited.contains("§ ") && cited.contains(section),
                "{cited}: {h}"
            );
        }
    }
    assert!(contracts_of("services agreement").contains("agreement~2"));

    // Each folder again: nothing changes; the co-branding contract's bytes in another folder
    // under another name are recognised as the contract already ingested.
    assert_eq!(
        status_of(&ingest(&acme), "agreement.txt")["status"],
        "already-indexed"
    );
    assert_eq!(
        status_of(&ingest(&beta), "agreement.txt")["status"],
        "already-indexed"
    );
    let copy = ingest(&moved);
    let copy = status_of(&copy, "co-branding.txt");
    assert_eq!(copy["status"], "already-indexed", "{copy}");
    assert_eq!(copy["contract"], "agreement", "{copy}");
    let why = copy["reason"].as_str().unwrap_or_default();
    assert!(why.contains("same bytes") && why.contains("acme"), "{why}");

    let out = precedent(&["remove", "--index", lib_s, "agreement~2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("removed {beta_clauses} clauses")),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("→ {acme_clauses})")), "{stderr}");
}

/// Ingest runs the CUAD clause typer on every clause: `search --type "Governing Law"` returns
/// only clauses typed so, and finds each contract's annotated governing-law clause.
#[test]
fn ingest_writes_clause_types_that_search_filters_on() {
    let typer = support::typer_args();
    let data = precedent_cuad::load(Path::new(CUAD).parent().expect("cuad dir")).expect("CUAD");
    let law = precedent_cuad::category_index("Governing Law").expect("category");
    // Three contracts with an annotated governing-law clause, and a fourth without one.
    let with_law: Vec<_> = data
        .contracts
        .iter()
        .filter(|c| c.spans_of(law).next().is_some())
        .skip(7)
        .step_by(50)
        .take(3)
        .collect();
    let without = data
        .contracts
        .iter()
        .find(|c| c.spans_of(law).next().is_none())
        .expect("a contract without governing law");
    let work = tempfile::tempdir().expect("tempdir");
    let folder = work.path().join("contracts");
    std::fs::create_dir_all(&folder).expect("mkdir");
    for c in with_law.iter().chain([&without]) {
        let name = c.path.file_name().expect("file name");
        std::fs::copy(&c.path, folder.join(name)).expect("copy contract");
    }
    let lib = work.path().join("lib");
    let mut args = vec![
        "ingest",
        support::s(&folder),
        "--index",
        support::s(&lib),
        "--no-vectors",
    ];
    args.extend(typer.iter().map(String::as_str));
    let out = precedent(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let search = |extra: &[&str]| {
        let mut args = vec![
            "search",
            "--index",
            support::s(&lib),
            "--json",
            "-k",
            "20",
            "governed by and construed in accordance with the laws of the State",
        ];
        args.extend_from_slice(extra);
        let out = precedent(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        json["hits"].as_array().cloned().unwrap_or_default()
    };
    // The category is named as CUAD names it; the filter ignores case.
    let typed = search(&["--type", "governing law"]);
    assert!(!typed.is_empty());
    for hit in search(&[]) {
        let types = hit["metadata"]["clause_types"].to_string();
        assert!(!types.contains("\"Parties\""), "Parties stored: {types}");
    }
    let confidence_of = |hit: &serde_json::Value, category: &str| -> Option<f64> {
        hit["metadata"]["clause_types"]
            .as_array()?
            .iter()
            .find(|t| t["category"] == category)?["confidence"]
            .as_f64()
    };
    // Stored only at the library's threshold.
    let stored_at = precedent_clause_types::type_thresholds::STORED_TYPE_THRESHOLD;
    for hit in &typed {
        let c = confidence_of(hit, "Governing Law");
        assert!(
            c.is_some_and(|c| c >= f64::from(stored_at) - 1e-6),
            "untyped hit: {hit}"
        );
    }
    let words = |t: &str| -> Vec<String> {
        t.split(|ch: char| !ch.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    for contract in &with_law {
        let annotation = words(&contract.spans_of(law).next().expect("span").match_text());
        let found = typed.iter().any(|hit| {
            hit["metadata"]["contract"] == contract.id.as_str() && {
                let clause = words(hit["text"].as_str().unwrap_or(""));
                let inside = annotation.iter().filter(|w| clause.contains(w)).count();
                inside * 10 >= annotation.len() * 8
            }
        });
        assert!(
            found,
            "{}: the governing-law clause is not among the typed hits {typed:#?}",
            contract.id
        );
    }
    // A type nobody has: nothing; an unknown category name: an error naming the real ones.
    assert!(search(&[
        "--type",
        "Source Code Escrow",
        "--type-min-confidence",
        "0.99"
    ])
    .is_empty());
    let bad = precedent(&[
        "search",
        "--index",
        support::s(&lib),
        "law",
        "--type",
        "Governing Laws",
    ]);
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("Governing Law"), "{stderr}");
    // Parties name things, not clauses: not stored, and the filter points to --party.
    let parties = precedent(&[
        "search",
        "--index",
        support::s(&lib),
        "party",
        "--type",
        "parties",
    ]);
    assert!(!parties.status.success());
    let stderr = String::from_utf8_lossy(&parties.stderr);
    assert!(stderr.contains("--party"), "{stderr}");
}

/// A lawyer runs `review` from the folder holding the contract, outside the checkout, naming
/// neither the CUAD data nor the model caches: the binary finds the checkout's CUAD folder and
/// its cached typer and classifier by walking up from the executable (`precedent-paths`). Before,
/// only the working directory's ancestors were searched, and this failed with "no CUAD data".
#[test]
fn review_from_a_folder_outside_the_checkout_uses_the_checkouts_data_and_models() {
    // The clone's caches are trained (once) where the default state directory points.
    support::typer_args();
    let outside = tempfile::tempdir().expect("tempdir");
    let local = "DeltathreeInc_19991102_S-1A_EX-10.19_6227850_EX-10.19_Co-Branding Agreement_ Service Agreement.txt";
    copy_cuad(local, outside.path());
    let out = Command::new(env!("CARGO_BIN_EXE_precedent"))
        .args(["review", local, "--json", "--top", "1"])
        .current_dir(outside.path())
        .env_remove("PRECEDENT_CUAD_DIR")
        .output()
        .expect("run precedent");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("review json");
    let findings = json["findings"].as_array().expect("findings");
    // One finding per category (--top 1), so the typer with its second stage answered.
    assert!(findings.len() >= 30, "{json}");
    let law = findings
        .iter()
        .find(|f| f["category"] == "Governing Law")
        .expect("a governing-law finding");
    assert!(
        law["confidence"].as_f64().unwrap_or(0.0) > 0.5,
        "governing law not found: {law}"
    );
    // Nothing was written into the lawyer's folder (the caches live in the checkout).
    assert!(
        !outside.path().join(".precedent").exists(),
        "a .precedent directory was created in the working directory"
    );
}

/// Letters and digits, lowercased: how `map-qrels` compares ACORD's cuts with contract text.
fn folded(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[test]
fn acord_ratings_carried_to_ingested_contracts_score_a_library_as_it_is() {
    // Three CUAD contracts that ACORD cut many rated clauses from.
    let contracts = [
        "PaperexchangeComInc_20000322_S-1A_EX-10.4_5202103_EX-10.4_Co-Branding Agreement.txt",
        "UpjohnInc_20200121_10-12G_EX-2.6_11948692_EX-2.6_Manufacturing Agreement_ Supply Agreement.txt",
        "NeoformaInc_19991202_S-1A_EX-10.26_5224521_EX-10.26_Co-Branding Agreement.txt",
    ];
    let work = tempfile::tempdir().expect("tempdir");
    let folder = work.path().join("contracts");
    std::fs::create_dir_all(&folder).expect("mkdir");
    for name in contracts {
        copy_cuad(name, &folder);
    }
    let lib = work.path().join("lib");
    let s = support::s;
    // Run from the work folder, so that caches (embeddings) land there, not in the checkout.
    let in_work = |args: &[&str]| support::precedent(args, work.path());
    // With vectors (661 clauses), so that the default pipeline is the contracts ranker's.
    let out = in_work(&["ingest", s(&folder), "--index", s(&lib), "--no-types"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let acord = support::acord();
    let corpus = acord.join("corpus.jsonl");
    let train = acord.join("qrels/train.tsv");
    let queries = acord.join("queries.jsonl");
    let qrels = work.path().join("lib-qrels.tsv");
    let mapping = work.path().join("mapping.json");
    let out = in_work(&[
        "map-qrels",
        "--corpus",
        s(&corpus),
        "--qrels",
        s(&train),
        "--index",
        s(&lib),
        "--out",
        s(&qrels),
        "--mapping-out",
        s(&mapping),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("placed in the 3 contracts' text"),
        "{stdout}"
    );

    // Every ACORD clause carried over shares its words with a library clause it was carried to.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mapping).expect("mapping")).expect("json");
    let carried = report["mapping"].as_object().expect("mapping object");
    assert!(
        carried.len() >= 40,
        "only {} ACORD clauses carried: {stdout}",
        carried.len()
    );
    let acord_text: std::collections::HashMap<String, String> =
        precedent_formats::read_corpus(&corpus)
            .expect("corpus")
            .into_iter()
            .map(|d| (d.id, folded(&d.text)))
            .collect();
    let library = precedent_library::Library::open(&lib).expect("library");
    let clause_text = |id: &str| {
        let row = library.store().row(id).expect("library clause id");
        folded(&library.store().clause(row).expect("clause").text)
    };
    for (acord_id, targets) in carried {
        let rated = &acord_text[acord_id];
        let targets: Vec<String> = targets
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| clause_text(t.as_str().expect("id")))
            .collect();
        let shared = (0..rated.len().saturating_sub(40))
            .step_by(40)
            .any(|k| targets.iter().any(|t| t.contains(&rated[k..k + 40])));
        assert!(
            shared,
            "{acord_id} carried to clauses that do not hold its words"
        );
    }

    // The ranker also learns from the carried judgements (`train --also-learn-from`): over a
    // small corpus of ACORD clauses (those carried here and the first 150 others), with and
    // without them. The judgements change the trees and are recorded.
    let (carried_docs, other_docs): (Vec<_>, Vec<_>) = precedent_formats::read_corpus(&corpus)
        .expect("corpus")
        .into_iter()
        .partition(|d| carried.contains_key(&d.id));
    let small: Vec<precedent_formats::CorpusDoc> = carried_docs
        .into_iter()
        .chain(other_docs.into_iter().take(150))
        .collect();
    let small_corpus = work.path().join("small.jsonl");
    precedent_formats::write_corpus(&small_corpus, &small).expect("write corpus");
    let train_ranker = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "train",
            "--corpus",
            s(&small_corpus),
            "--index",
            "small-lib",
            "--queries",
            s(&queries),
            "--qrels",
            s(&train),
            "--without",
            "rating-memory",
            "--trees",
            "20",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        in_work(&args)
    };
    let (plain, also) = (work.path().join("plain"), work.path().join("also"));
    let out = train_ranker(&plain, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = train_ranker(
        &also,
        &[
            "--also-learn-from",
            s(&lib),
            "--also-learn-from-qrels",
            s(&qrels),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("also learning from"), "{stderr}");
    let trees = |dir: &Path| std::fs::read(dir.join("ranker.json")).expect("ranker.json");
    assert_ne!(trees(&plain), trees(&also));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(also.join("manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert!(
        manifest["trained_on"].to_string().contains("lib-qrels.tsv"),
        "{manifest}"
    );
    // Judgements that name none of the library's clauses (ACORD's own ids) are refused.
    let out = train_ranker(
        &work.path().join("refused"),
        &[
            "--also-learn-from",
            s(&lib),
            "--also-learn-from-qrels",
            s(&train),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("none of its judgements names a clause of"),
        "{stderr}"
    );

    // The carried judgements score the library as it is (no --corpus: nothing is rebuilt).
    let judged = precedent_formats::read_qrels(&qrels).expect("qrels");
    assert!(judged.num_queries() >= 20, "{}", judged.num_queries());
    let out = in_work(&[
        "eval",
        "--index",
        s(&lib),
        "--queries",
        s(&queries),
        "--qrels",
        s(&qrels),
        "--pipeline",
        "bm25",
    ]);
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let overall = table
        .lines()
        .find(|l| l.starts_with("Overall"))
        .unwrap_or_else(|| panic!("no Overall line: {table}"));
    let fields: Vec<&str> = overall.split_whitespace().collect();
    assert_eq!(fields[1], judged.num_queries().to_string(), "{overall}");
    let ndcg5: f64 = fields[2].parse().expect("NDCG@5");
    assert!(ndcg5 > 20.0 && ndcg5 <= 100.0, "{overall}");

    // The ACORD ranker does not fit these contracts; the contracts ranker (trained without the
    // rating memory) is search's default here.
    let out = in_work(&[
        "search",
        "--index",
        s(&lib),
        "--json",
        "-k",
        "3",
        "liability cap carveouts",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(found["pipeline"], "hybrid+learned", "{found}");
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(3), "{found}");

    // Asked to build the ACORD corpus into that library, eval refuses instead of replacing it.
    let clauses = library.len();
    let out = in_work(&[
        "eval",
        "--corpus",
        s(&corpus),
        "--index",
        s(&lib),
        "--queries",
        s(&queries),
        "--qrels",
        s(&train),
        "--pipeline",
        "bm25",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("would be replaced"), "{stderr}");
    let reopened = precedent_library::Library::open(&lib).expect("library still opens");
    assert_eq!(reopened.len(), clauses);
}
