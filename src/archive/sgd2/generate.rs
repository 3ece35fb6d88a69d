//! Writes SGD2 test databases (placeholder).
