//! Statistics: correlations, significance tests, bootstrap, multiple-testing corrections.
