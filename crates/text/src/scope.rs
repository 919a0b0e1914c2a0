//! Limits a query requires a clause to state: "non-compete bound by time and territory",
//! "exclusivity limited to a territory", "non-solicit limited in duration".
//!
//! A restrictive covenant is enforceable (and worth copying) when it is limited in time and in
//! space, so a lawyer asking for one "bound by time and territory" wants clauses that say both:
//! a duration ("during the Term and for six months after", "for a period of two years") and a
//! geographic scope ("in the Territory", "within 50 miles", "in any country"). A clause on the
//! right topic that states neither is exactly what the lawyer filtered out, yet it scores as
//! well on every lexical and dense signal.
//!
//! In ACORD's training ratings, for "Non-compete bound by time and territory" all 20 two-star
//! clauses lack a duration or a place and none of the 12 relevant ones do; for "Exclusivity
//! bound by time and territory", 22 of 22 against 1 of 9.

/// A limit the query requires the clause to state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A duration: the term, a period, months, years, "until".
    Duration,
    /// A geographic scope: a territory, country, region, radius.
    Territory,
}

/// Words after which the query names limits ("bound by time and territory").
const LIMIT_TRIGGERS: &[&str] = &[
    "bound by",
    "bounded by",
    "limited by",
    "limited to",
    "limited in",
    "restricted by",
    "restricted to",
    "restricted in",
    "limits on",
    "limitations on",
    "with limits on",
];

/// Words that, right before a trigger, turn a required limit into an unwanted one.
const NEGATIONS: &[&str] = &["not", "never", "no", "without", "nor"];

const DURATION_WORDS: &[&str] = &["time", "duration", "period", "temporal", "term"];
const TERRITORY_WORDS: &[&str] = &[
    "territory",
    "territorial",
    "geography",
    "geographic",
    "geographical",
    "area",
    "region",
    "place",
    "location",
];

/// How clauses state a duration (whole words, lowercase).
const DURATION_FORMS: &[&str] = &[
    "term",
    "period",
    "during",
    "day",
    "days",
    "month",
    "months",
    "year",
    "years",
    "until",
    "expiration",
    "thereafter",
];

/// How clauses state a geographic scope (whole words, lowercase).
const TERRITORY_FORMS: &[&str] = &[
    "territory",
    "territories",
    "country",
    "countries",
    "geographic",
    "geographical",
    "area",
    "region",
    "regions",
    "worldwide",
    "world",
    "mile",
    "miles",
    "kilometers",
    "radius",
    "state",
    "states",
    "city",
    "county",
    "location",
    "market",
];

/// The limits a query requires, in the order it names them (each at most once).
pub fn required_limits(query: &str) -> Vec<Limit> {
    let words = crate::lowercase_words(query);
    let mut limits = Vec::new();
    for start in 0..words.len() {
        let Some(trigger) = LIMIT_TRIGGERS
            .iter()
            .find(|t| crate::starts_with_phrase(&words[start..], t))
        else {
            continue;
        };
        // "not bound by time", "never limited to a territory": the lawyer wants clauses
        // *without* that limit, so the trigger requires nothing. (Demoting clauses that do state
        // one would be wrong too: "not bound by time or longer than 12 months" accepts a
        // two-year term.)
        if start > 0 && NEGATIONS.contains(&words[start - 1].as_str()) {
            continue;
        }
        let after = start + trigger.split(' ').count();
        for w in words.iter().skip(after).take(5) {
            let limit = if DURATION_WORDS.contains(&w.as_str()) {
                Limit::Duration
            } else if TERRITORY_WORDS.contains(&w.as_str()) {
                Limit::Territory
            } else {
                continue;
            };
            if !limits.contains(&limit) {
                limits.push(limit);
            }
        }
    }
    limits
}

impl Limit {
    /// Whether `text` (raw clause text) states this limit.
    pub fn stated_in(self, text: &str) -> bool {
        let forms = match self {
            Limit::Duration => DURATION_FORMS,
            Limit::Territory => TERRITORY_FORMS,
        };
        text.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| forms.contains(&w))
    }
}

/// A bound on how long the query wants a restriction to last: "not bound by time or longer than
/// 12 months" (a no-solicit that a 12-month tail does not satisfy), "non-compete of no more than
/// two years".
///
/// Why: the length of a covenant is what the lawyer negotiates, and every lexical and dense
/// signal scores "for twelve (12) months thereafter" as well as "for three (3) years thereafter".
/// A clause states its length as a number of days, months or years; one that states none (bound
/// only by the term, or by nothing) is not judged, since the query may well want it ("not bound
/// by time").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DurationBound {
    /// Longer than this many months.
    LongerThan(f32),
    /// At most this many months.
    AtMost(f32),
}

/// Phrases before a number that ask for more ("longer than 12 months", "at least two years").
const MORE_THAN: &[&str] = &[
    "longer than",
    "more than",
    "greater than",
    "in excess of",
    "exceeding",
    "at least",
    "over",
];

/// Phrases before a number that ask for at most that much.
const AT_MOST: &[&str] = &[
    "no longer than",
    "not longer than",
    "no more than",
    "not more than",
    "shorter than",
    "less than",
    "fewer than",
    "at most",
    "not exceeding",
    "not to exceed",
    "up to",
    "maximum of",
    "max",
];

const SMALL_NUMBERS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

const TENS: &[(&str, f32)] = &[
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("forty", 40.0),
    ("fifty", 50.0),
    ("sixty", 60.0),
    ("seventy", 70.0),
    ("eighty", 80.0),
    ("ninety", 90.0),
];

/// A number written in digits or words at `words[at..]` ("12", "twelve", "twenty four"), with
/// how many words it takes.
fn number_at(words: &[String], at: usize) -> Option<(f32, usize)> {
    let word = words.get(at)?;
    if let Ok(n) = word.parse::<f32>() {
        return Some((n, 1));
    }
    if let Some(n) = SMALL_NUMBERS.iter().position(|w| w == word) {
        return Some((n as f32, 1));
    }
    let (_, tens) = TENS.iter().find(|(w, _)| w == word)?;
    match words
        .get(at + 1)
        .and_then(|w| SMALL_NUMBERS[1..10].iter().position(|s| s == w))
    {
        Some(unit) => Some((tens + unit as f32 + 1.0, 2)),
        None => Some((*tens, 1)),
    }
}

/// Months in one of a duration unit.
fn unit_months(word: &str) -> Option<f32> {
    match word {
        "day" | "days" => Some(1.0 / 30.4),
        "week" | "weeks" => Some(12.0 / 52.0),
        "month" | "months" => Some(1.0),
        "year" | "years" => Some(12.0),
        _ => None,
    }
}

/// A duration at `words[at..]`: a number, optionally repeated in digits ("twelve (12)"), then
/// optionally "consecutive", "calendar" or "full", then a unit. Returns months.
fn duration_at(words: &[String], at: usize) -> Option<f32> {
    let (n, used) = number_at(words, at)?;
    let mut next = at + used;
    if let Some((m, 1)) = number_at(words, next) {
        if (m - n).abs() < f32::EPSILON {
            next += 1;
        }
    }
    while words
        .get(next)
        .is_some_and(|w| matches!(w.as_str(), "consecutive" | "calendar" | "full"))
    {
        next += 1;
    }
    unit_months(words.get(next)?).map(|per| n * per)
}

/// The duration bound a query states, if any.
pub fn wanted_duration(query: &str) -> Option<DurationBound> {
    let words = crate::lowercase_words(query);
    for start in 0..words.len() {
        let rest = &words[start..];
        let (bound, phrase): (fn(f32) -> DurationBound, &str) =
            if let Some(p) = AT_MOST.iter().find(|p| crate::starts_with_phrase(rest, p)) {
                (DurationBound::AtMost, p)
            } else if let Some(p) = MORE_THAN
                .iter()
                .find(|p| crate::starts_with_phrase(rest, p))
            {
                (DurationBound::LongerThan, p)
            } else {
                continue;
            };
        if let Some(months) = duration_at(&words, start + phrase.split(' ').count()) {
            return Some(bound(months));
        }
    }
    None
}

/// The longest duration a clause states, in months ("for a period of twelve (12) months
/// thereafter" is 12; "three years" is 36), or `None` when it states none as a number.
pub fn longest_duration_months(text: &str) -> Option<f32> {
    durations(&crate::lowercase_words(text)).fold(None, |longest: Option<f32>, d| {
        Some(longest.map_or(d, |l| l.max(d)))
    })
}

/// Every duration `words` state as a number, in months, in text order.
fn durations(words: &[String]) -> impl Iterator<Item = f32> + '_ {
    (0..words.len()).filter_map(|i| duration_at(words, i))
}

/// The period of fees a cap query measures its cap by, in months ("Cap on liability equals 12
/// months payment": 12): a duration stated in a query that asks for a cap
/// ([`crate::wants_cap`]) and puts no bound on a covenant's length.
///
/// Why: caps are mostly "the fees paid or payable in the N months preceding the claim", and the
/// lawyer who names N wants that N; every cap clause matches the rest of the query. No training
/// query states a period (checked with `cargo run -p precedent-text --example query_readers`),
/// so the rule is drafting knowledge, unvalidated by the CV.
pub fn wanted_cap_period(query: &str) -> Option<f32> {
    if !crate::wants_cap(query) || wanted_duration(query).is_some() {
        return None;
    }
    let words = crate::lowercase_words(query);
    (0..words.len()).find_map(|i| duration_at(&words, i))
}

/// Words that state a period of one year without a number ("the annual fees", "fees paid in
/// the preceding year").
const ONE_YEAR: &[&str] = &[
    "annual",
    "annually",
    "yearly",
    "preceding year",
    "prior year",
    "previous year",
    "past year",
];

/// Every period the clause states, in months ("twelve (12) months", "12-month period", "one
/// year"; "annual" or "the preceding year" as twelve), in text order.
pub fn stated_periods(text: &str) -> Vec<f32> {
    let words = crate::lowercase_words(text);
    let mut periods: Vec<f32> = durations(&words).collect();
    if crate::contains_any_phrase(&words, ONE_YEAR) {
        periods.push(12.0);
    }
    periods
}

/// Whether `periods` (from [`stated_periods`]) hold a period of `months`.
pub fn states_period(periods: &[f32], months: f32) -> bool {
    periods.iter().any(|d| (d - months).abs() < 0.5)
}

impl DurationBound {
    /// Whether a clause whose longest stated duration is `longest` months goes against the
    /// bound (a clause that states none never does).
    pub fn goes_against(self, longest: Option<f32>) -> bool {
        match (self, longest) {
            (DurationBound::LongerThan(months), Some(l)) => l <= months + 1e-3,
            (DurationBound::AtMost(months), Some(l)) => l > months + 1e-3,
            (_, None) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_period_is_read_from_cap_queries_only() {
        assert_eq!(
            wanted_cap_period("Cap on liability equals 12 months payment"),
            Some(12.0)
        );
        assert_eq!(
            wanted_cap_period("liability cap of one year of fees"),
            Some(12.0)
        );
        assert_eq!(wanted_cap_period("cap on liability"), None);
        assert_eq!(
            wanted_cap_period("No-Solicit Of Employees not bound by time or longer than 12 months"),
            None
        );
        let twelve = |text: &str| states_period(&stated_periods(text), 12.0);
        assert!(twelve(
            "shall not exceed the fees paid in the twelve (12) months preceding the claim"
        ));
        assert!(twelve(
            "limited to the fees paid during the 12-month period"
        ));
        assert!(twelve("shall not exceed the annual fees"));
        assert!(!twelve(
            "shall not exceed the fees paid in the six (6) months"
        ));
        assert!(!twelve("shall not exceed $1,000,000"));
    }

    #[test]
    fn reads_required_limits() {
        assert_eq!(
            required_limits("Non-compete bound by time and territory"),
            vec![Limit::Duration, Limit::Territory]
        );
        assert_eq!(
            required_limits("exclusivity limited to a territory"),
            vec![Limit::Territory]
        );
        assert!(required_limits("non-compete clause").is_empty());
        assert!(required_limits("termination for convenience in the territory").is_empty());
        // A negated trigger asks for clauses without the limit: nothing is required.
        assert!(required_limits(
            "No-Solicit Of Employees not bound by time or longer than 12 months"
        )
        .is_empty());
        assert!(required_limits("exclusivity never limited to a territory").is_empty());
    }

    #[test]
    fn finds_stated_limits() {
        let covenant = "During the Term and for six (6) months thereafter, Distributor shall \
                        not sell competing products in the Territory.";
        assert!(Limit::Duration.stated_in(covenant));
        assert!(Limit::Territory.stated_in(covenant));
        let bare = "Agent may not offer or promote competitive products without consent.";
        assert!(!Limit::Duration.stated_in(bare));
        assert!(!Limit::Territory.stated_in(bare));
    }
    #[test]
    fn reads_duration_bounds() {
        assert_eq!(
            wanted_duration("No-Solicit Of Employees not bound by time or longer than 12 months"),
            Some(DurationBound::LongerThan(12.0))
        );
        assert_eq!(
            wanted_duration("non-compete of no more than two years"),
            Some(DurationBound::AtMost(24.0))
        );
        assert_eq!(
            wanted_duration("non-solicit lasting at least twenty four months"),
            Some(DurationBound::LongerThan(24.0))
        );
        assert_eq!(
            wanted_duration("Cap on liability equals 12 months payment"),
            None
        );
        assert_eq!(wanted_duration("more than one party"), None);
        assert_eq!(
            wanted_duration("Non-compete bound by time and territory"),
            None
        );
    }

    #[test]
    fn finds_the_longest_stated_duration() {
        // Real ACORD no-solicit clauses.
        let one_year = "During the Consultation Period and for a period of one year thereafter, \
                        the Consultant shall not ... solicit any employee whose employment with \
                        the Company has been terminated for a period of six months or longer";
        assert_eq!(longest_duration_months(one_year), Some(12.0));
        let twelve = "Each Party agrees that during the term of this Agreement and for a period \
                      of twelve (12) consecutive months thereafter they shall not, directly, \
                      solicit";
        assert_eq!(longest_duration_months(twelve), Some(12.0));
        let two_years = "AVDU agrees that for a twenty four months (24) following the execution \
                         of this Agreement, AVDU shall not ... solicit";
        assert_eq!(longest_duration_months(two_years), Some(24.0));
        let thirty_days = "upon thirty (30) days notice";
        assert!((longest_duration_months(thirty_days).unwrap_or(0.0) - 0.987).abs() < 0.01);
        let unbounded = "from and after the date hereof, you will not solicit ... any person \
                         who is employed by the Company";
        assert_eq!(longest_duration_months(unbounded), None);
        let redacted = "during the [***] ([***]) [***] period starting from the Effective Date";
        assert_eq!(longest_duration_months(redacted), None);
    }

    #[test]
    fn a_bound_judges_only_clauses_that_state_a_duration() {
        let longer = DurationBound::LongerThan(12.0);
        assert!(longer.goes_against(Some(12.0)));
        assert!(longer.goes_against(Some(6.0)));
        assert!(!longer.goes_against(Some(36.0)));
        assert!(!longer.goes_against(None));
        let at_most = DurationBound::AtMost(24.0);
        assert!(at_most.goes_against(Some(60.0)));
        assert!(!at_most.goes_against(Some(24.0)));
        assert!(!at_most.goes_against(None));
    }
}
