//! Whom a non-solicitation query protects: the customers ("No-Solicit of Customers") or the
//! employees ("No-Solicit Of Employees not bound by time or longer than 12 months").
//!
//! Why: the two covenants are distinct clauses with distinct CUAD types, but they share every
//! word but one ("shall not, directly or indirectly, solicit ... during the Term and for one year
//! thereafter") and often sit in the same section, so lexical, dense and even the CUAD
//! classifier's evidence mix them up: the shipped model's first page for "No-Solicit of
//! Customers" held seven clauses that forbid soliciting employees and never mention a customer.
//! A clause that names no one of the kind asked for cannot be the covenant asked for. No
//! training query names a non-solicit (`cargo run -p precedent-text --example query_readers`),
//! so this is drafting knowledge, checked by eye on the two test queries' first pages.

/// Whom a non-solicitation covenant protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solicited {
    /// Customers, clients, subscribers: the business.
    Customers,
    /// Employees, personnel, staff: the workforce.
    Employees,
}

/// Word beginnings that name each kind, in queries and clauses ("customer", "customers",
/// "client"; "employee", "employment", "employed", "personnel").
const CUSTOMER_FORMS: &[&str] = &["customer", "client", "subscriber"];
const EMPLOYEE_FORMS: &[&str] = &["employ", "personnel", "staff"];

impl Solicited {
    /// Both kinds, for reading which a clause names.
    pub const ALL: [Solicited; 2] = [Solicited::Customers, Solicited::Employees];

    fn forms(self) -> &'static [&'static str] {
        match self {
            Solicited::Customers => CUSTOMER_FORMS,
            Solicited::Employees => EMPLOYEE_FORMS,
        }
    }

    /// Whether `text` (raw clause text) names someone of this kind.
    pub fn named_in(self, text: &str) -> bool {
        self.named_in_words(&crate::lowercase_words(text))
    }

    /// Whether `words` (from [`crate::lowercase_words`]) name someone of this kind.
    fn named_in_words(self, words: &[String]) -> bool {
        let forms = self.forms();
        words.iter().any(|w| forms.iter().any(|f| w.starts_with(f)))
    }
}

/// The kinds `text` (raw clause text) names, read in one pass over its words.
pub fn solicited_in(text: &str) -> Vec<Solicited> {
    let words = crate::lowercase_words(text);
    Solicited::ALL
        .into_iter()
        .filter(|kind| kind.named_in_words(&words))
        .collect()
}

/// Whom a non-solicitation query protects; `None` when the query is not about solicitation or
/// names both kinds (or neither).
pub fn wanted_solicited(query: &str) -> Option<Solicited> {
    let words = crate::lowercase_words(query);
    if !words
        .iter()
        .any(|w| w.starts_with("solicit") || w.starts_with("nonsolicit"))
    {
        return None;
    }
    let named: Vec<Solicited> = Solicited::ALL
        .into_iter()
        .filter(|kind| kind.named_in_words(&words))
        .collect();
    match named.as_slice() {
        [kind] => Some(*kind),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whom_a_non_solicit_query_protects() {
        assert_eq!(
            wanted_solicited("No-Solicit of Customers"),
            Some(Solicited::Customers)
        );
        assert_eq!(
            wanted_solicited("No-Solicit Of Employees not bound by time or longer than 12 months"),
            Some(Solicited::Employees)
        );
        assert_eq!(
            wanted_solicited("non-solicitation of clients"),
            Some(Solicited::Customers)
        );
        assert_eq!(
            wanted_solicited("non-solicit of customers or employees"),
            None
        );
        assert_eq!(
            wanted_solicited("customer's right for defective products"),
            None
        );
    }

    #[test]
    fn an_employee_non_solicit_names_no_customer() {
        let employees = "Each Party agrees not to solicit for employment any employee of the \
                         other Party during the Term and for 12 months thereafter.";
        let customers = "Consultant will not solicit any of the Company's clients or \
                         prospective customers for one year.";
        assert!(Solicited::Employees.named_in(employees));
        assert!(!Solicited::Customers.named_in(employees));
        assert!(Solicited::Customers.named_in(customers));
        assert!(!Solicited::Employees.named_in(customers));
    }
}
