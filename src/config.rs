//! placeholder: filled in by the foundation work (issue 2).
