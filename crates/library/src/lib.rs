//! precedent-library
