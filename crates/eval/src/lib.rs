//! precedent-eval
