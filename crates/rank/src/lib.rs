//! precedent-rank
