//! How many bodies of law a governing-law clause names, for queries that ask for clauses with
//! several ("Clause with multiple governing laws").
//!
//! Why: such a query wants the clause that splits the law ("... the laws of the State of
//! California; provided that matters relating to any Patent will be governed by the patent laws
//! of the relevant jurisdiction", "the law of Delaware and, to the extent applicable, the federal
//! law of the United States"). Every governing-law clause matches the query's words equally
//! well, and the plain single-law clauses, by far the most common, crowd the first page.

/// Words that make a query ask for several laws when they come right before "governing law(s)"
/// or "laws" ("multiple governing laws", "two governing laws", "more than one governing law").
const SEVERAL: &[&str] = &[
    "multiple",
    "several",
    "two",
    "different",
    "various",
    "mixed",
];

/// Sovereigns named between "laws of the" and the place ("the State of New York").
const SOVEREIGNS: &[&str] = &[
    "state",
    "commonwealth",
    "province",
    "republic",
    "kingdom",
    "people",
    "federation",
];

/// Words after "laws of" that name no particular law ("the laws of any other jurisdiction").
const NOT_A_PLACE: &[&str] = &[
    "the",
    "any",
    "such",
    "another",
    "other",
    "a",
    "an",
    "this",
    "that",
    "each",
    "said",
    "its",
    "their",
    "which",
    "whose",
    "all",
    "applicable",
    "conflict",
    "conflicts",
];

/// Places named in lowercase that are still a law of their own ("the laws of the jurisdiction in
/// which such Patent is granted").
const GENERIC_PLACES: &[&str] = &["jurisdiction", "jurisdictions", "country", "countries"];

/// First words of two-word places, so "New York" and "New Jersey" count as two laws.
const TWO_WORD_PLACE_STARTS: &[&str] = &[
    "new", "north", "south", "west", "rhode", "british", "united", "hong", "puerto", "district",
];

/// Whether the query asks for clauses that name more than one governing law.
pub fn wants_several_laws(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    let law_at = |i: usize| {
        matches!(
            words.get(i).map(String::as_str),
            Some("law" | "laws" | "governing")
        )
    };
    (0..words.len()).any(|i| {
        (SEVERAL.contains(&words[i].as_str()) && (law_at(i + 1) || law_at(i + 2)))
            || (crate::starts_with_phrase(&words[i..], "more than one") && law_at(i + 3))
    })
}

/// The distinct bodies of law a clause names: each place after "law(s) of [the State of]"
/// ("New York", "Delaware", "the jurisdiction in which ..."), plus "federal law(s)" and "patent
/// laws" as laws of their own.
pub fn laws_named(text: &str) -> usize {
    // Words with their original capitalisation, and whether punctuation follows them (a place
    // ends there: "the State of Texas, without regard").
    let mut words: Vec<(String, bool)> = Vec::new();
    for raw in text.split_whitespace() {
        let trimmed = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if trimmed.is_empty() {
            continue;
        }
        let ends_phrase = raw.ends_with(|c: char| !c.is_alphanumeric());
        words.push((trimmed.to_owned(), ends_phrase));
    }
    let lower: Vec<String> = words.iter().map(|(w, _)| w.to_lowercase()).collect();
    let mut laws: Vec<String> = Vec::new();
    let mut add = |law: String| {
        if !laws.contains(&law) {
            laws.push(law);
        }
    };
    // The place at `at`, if a word that names one stands there.
    let place_at = |at: usize| -> Option<String> {
        let first = lower.get(at)?;
        let capitalised = words[at].0.chars().next().is_some_and(char::is_uppercase);
        if NOT_A_PLACE.contains(&first.as_str())
            || !(capitalised || GENERIC_PLACES.contains(&first.as_str()))
        {
            return None;
        }
        let mut place = first.clone();
        if TWO_WORD_PLACE_STARTS.contains(&first.as_str()) && !words[at].1 {
            if let Some(second) = lower.get(at + 1) {
                place.push(' ');
                place.push_str(second);
            }
        }
        Some(place)
    };
    for i in 0..lower.len() {
        // "the State of Illinois" names a place wherever it stands ("the internal laws and
        // decisions of the courts of the State of Illinois").
        if SOVEREIGNS.contains(&lower[i].as_str())
            && lower.get(i + 1).map(String::as_str) == Some("of")
            && !words[i].1
        {
            if let Some(place) = place_at(i + 2) {
                add(place);
            }
            continue;
        }
        let is_law = matches!(lower[i].as_str(), "law" | "laws");
        if !is_law {
            continue;
        }
        if i > 0 && matches!(lower[i - 1].as_str(), "federal" | "patent") {
            add(lower[i - 1].clone());
        }
        if lower.get(i + 1).map(String::as_str) != Some("of") || words[i].1 {
            continue;
        }
        let mut at = i + 2;
        if lower.get(at).map(String::as_str) == Some("the") {
            at += 1;
        }
        // "the State of", "the People's Republic of": the place comes after.
        while lower.get(at).is_some_and(|w| {
            SOVEREIGNS.contains(&w.as_str()) || w == "of" || w == "people's" || w == "peoples"
        }) {
            at += 1;
        }
        if let Some(place) = place_at(at) {
            add(place);
        }
    }
    laws.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_queries_for_several_laws() {
        assert!(wants_several_laws("Clause with multiple governing laws"));
        assert!(wants_several_laws(
            "governing law clause with more than one governing law"
        ));
        assert!(wants_several_laws("two different laws"));
        assert!(!wants_several_laws("New York Governing Law"));
        assert!(!wants_several_laws(
            "Governing Law excluding UCC or other similar regulatory frameworks"
        ));
        assert!(!wants_several_laws("multiple licensees"));
    }

    #[test]
    fn counts_the_laws_a_clause_names() {
        // Real ACORD governing-law clauses.
        let twice_new_york = "This Letter shall be governed by and construed in accordance with \
            the laws of the State of New York without reference to any rules of conflict of laws. \
            This Agreement shall be governed by and construed in accordance with the laws of the \
            State of New York without reference to any rules of conflict of laws.";
        assert_eq!(laws_named(twice_new_york), 1);
        let illinois_delaware = "This agreement shall be governed by and subject to the internal \
            laws (exclusive of the conflicts of law provisions) and decisions of the courts of the \
            State of Illinois This Agreement shall be governed by and interpreted under and in \
            accordance with the laws of the State of Delaware without regard to principles of \
            conflicts of laws.";
        assert_eq!(laws_named(illinois_delaware), 2);
        let patents = "This Agreement shall be governed by and construed in accordance with the \
            internal laws of the State of California applicable to agreements made and to be \
            performed entirely within such state, without regard to the conflicts of law \
            principles of such state; provided that any matters relating to the construction or \
            effect of any Patent will be governed by the patent laws of the relevant jurisdiction \
            in which such Patent is granted.";
        assert_eq!(laws_named(patents), 2);
        let federal = "will be governed by and determined in accordance with the statutory, \
            regulatory and decisional law of the State of Delaware (exclusive of such state's \
            choice of laws or conflicts of laws rules) and, to the extent applicable, the federal \
            statutory, regulatory and decisional law of the United States.";
        assert_eq!(laws_named(federal), 2);
        let texas = "THE INTERPRETATION AND PERFORMANCE OF THIS CONTRACT SHALL BE IN ACCORDANCE \
            WITH AND CONTROLLED BY THE LAWS OF THE STATE OF TEXAS, WITHOUT REGARD TO THE DOCTRINES \
            GOVERNING CHOICE OF LAW.";
        assert_eq!(laws_named(texas), 1);
        let other_jurisdiction = "governed by the laws of the State of New York, without giving \
            effect to any choice of law principles that would result in the application of the \
            laws of any other jurisdiction.";
        assert_eq!(laws_named(other_jurisdiction), 1);
        let china = "shall be governed by, and construed in accordance with, the laws of the \
            People's Republic of China (without regard to its conflicts of laws rules that would \
            mandate the application of the laws of another jurisdiction).";
        assert_eq!(laws_named(china), 1);
    }
}
